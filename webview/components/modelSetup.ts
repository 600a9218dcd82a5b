/**
 * The model the panel sends to, as a start state instead of an error (issue 30 item 1), above the
 * composer:
 * - no model anywhere: "Add Model…" (the command's input boxes); a message typed meanwhile stays
 *   in the composer (Composer.submit) and is sent once a model exists;
 * - only VS Code's own models and none picked yet: "Use VS Code's models" beside Add Model…;
 * - the selected model has no API key stored or in the environment: "Set API Key", before a
 *   request is refused (issue 30 item 2).
 * A region, never an alert: nothing here went wrong yet.
 */
import type { ModelChoice, WebviewToHost } from "../../extension/protocol/webview.js";
import { VSCODE_LM_PREFIX } from "../../extension/protocol/lm.js";
import type { PanelState } from "../store.js";
import { h, icon, setText } from "./dom.js";

type Mode = "none" | "vscode-lm" | "key-missing" | "hidden";

export function setupMode(s: Pick<PanelState, "hostReady" | "models" | "model" | "modelChosen">): Mode {
  if (!s.hostReady) return "hidden";
  if (s.models.length === 0) return "none";
  if (!s.modelChosen && s.models.every((m) => m.name.startsWith(VSCODE_LM_PREFIX))) return "vscode-lm";
  if (currentModel(s)?.key_missing) return "key-missing";
  return "hidden";
}

function currentModel(s: Pick<PanelState, "models" | "model">): ModelChoice | undefined {
  return s.models.find((m) => m.name === s.model);
}

function button(label: string, codicon: string, testid: string, secondary: boolean, onClick: () => void): HTMLElement {
  return h("vscode-button", { testid, attrs: { "aria-label": label, secondary }, on: { click: onClick } }, icon(codicon), h("span", { text: label }));
}

export class ModelSetup {
  readonly root: HTMLElement;
  private readonly heading = h("span", { class: "model-setup-heading", testid: "model-setup-heading" });
  private readonly text = h("p", { class: "model-setup-text", testid: "model-setup-text" });
  private readonly draftLine = h("p", { class: "model-setup-draft", testid: "model-setup-draft", attrs: { hidden: true } });
  private readonly addModel: HTMLElement;
  private readonly useLm: HTMLElement;
  private readonly setKey: HTMLElement;
  private mode: Mode | undefined;
  private label = "";

  constructor(post: (m: WebviewToHost) => void, private readonly model: () => string | null) {
    this.addModel = button("Add Model…", "add", "add-model", false, () => post({ type: "addModel" }));
    this.useLm = button("Use VS Code's models", "copilot", "use-vscode-models", true, () => post({ type: "useVsCodeModels" }));
    this.setKey = button("Set API Key", "key", "setup-set-key", false, () => {
      const name = this.model();
      if (name) post({ type: "setApiKey", model: name });
    });
    this.root = h("section", { id: "model-setup", testid: "model-setup", class: "model-setup", attrs: { role: "region", "aria-label": "Set up a model", hidden: true } },
      h("div", { class: "model-setup-head" }, icon("sparkle"), this.heading),
      this.text,
      this.draftLine,
      h("div", { class: "model-setup-actions" }, this.addModel, this.useLm, this.setKey));
  }

  /** Send was pressed with no model: the message stays in the composer; say so here and offer the button. */
  holdDraft(): void {
    this.draftLine.hidden = false;
    setText(this.draftLine, "Your message is kept in the box below: add a model, then press Send.");
    this.addModel.focus();
  }

  update(s: PanelState): void {
    const mode = setupMode(s);
    const label = currentModel(s)?.label ?? "";
    if (mode === this.mode && label === this.label) return;
    this.mode = mode;
    this.label = label;
    this.root.hidden = mode === "hidden";
    this.root.dataset.mode = mode;
    if (mode !== "none") this.draftLine.hidden = true;
    this.addModel.hidden = mode === "key-missing";
    this.useLm.hidden = mode !== "vscode-lm";
    this.setKey.hidden = mode !== "key-missing";
    this.addModel.toggleAttribute("secondary", mode === "vscode-lm");
    switch (mode) {
      case "none":
        setText(this.heading, "Choose a model to start");
        setText(this.text, "DeerFlow needs a chat model to answer. Add one on an OpenAI-compatible endpoint: OpenAI, a gateway, or a local server such as Ollama. Models that VS Code offers (Copilot's, for example) appear here once an extension provides them.");
        return;
      case "vscode-lm":
        setText(this.heading, "Pick a model");
        setText(this.text, "Use a model VS Code already has (no key needed), or add your own OpenAI-compatible endpoint.");
        return;
      case "key-missing":
        setText(this.heading, `No API key for ${label}`);
        setText(this.text, "Its endpoint will refuse requests without one. The key is kept in VS Code's secret storage.");
        return;
      case "hidden":
        return;
    }
  }
}
