/**
 * The message box. Enter sends, Shift+Enter is a newline (IME composition is left alone); Send is
 * disabled while a run is active, since the host rejects a second run on a thread. Attachments
 * are picked by the host (a native file dialog), listed here with a remove button each.
 * A leading `/` offers the workspace's user-invocable skills (DeerFlow's `/skill-name` grammar,
 * protocol/slashSkill.ts): Tab or a click completes the first or the clicked name.
 */
import type { ModelChoice, PanelSkill, WebviewToHost } from "../../extension/protocol/webview.js";
import { partialSlashName } from "../../extension/protocol/slashSkill.js";
import type { PanelState } from "../store.js";
import { isRunActive } from "../store.js";
import { formatSize, h, icon, iconButton } from "./dom.js";

interface SelectLike extends HTMLElement {
  value: string;
}
interface CheckboxLike extends HTMLElement {
  checked: boolean;
}

export class Composer {
  readonly root: HTMLElement;
  readonly input = h("textarea", {
    id: "message-input",
    testid: "message-input",
    class: "message-input",
    attrs: { "aria-label": "Message", rows: "3", maxlength: "200000", placeholder: "Ask DeerFlow… (Enter to send, Shift+Enter for a new line)" },
  });
  private readonly send: HTMLElement;
  private readonly attachList = h("ul", { id: "attachments", testid: "attachments", class: "attachments", attrs: { "aria-label": "Attachments", hidden: true } });
  private readonly model = h("vscode-single-select", { id: "model-picker", testid: "model-picker", class: "model-picker", attrs: { label: "Model", "aria-label": "Model", position: "above" } }) as SelectLike;
  private readonly plan = h("vscode-checkbox", { id: "plan-mode", testid: "plan-mode", attrs: { toggle: true, label: "Plan mode", title: "Plan mode: the agent keeps a todo list" } }) as CheckboxLike;
  private models: readonly ModelChoice[] = [];
  private attachments: PanelState["attachments"] = [];
  private active = false;
  private hostReady = false;
  /** Send was pressed before `init`: submit again once it arrives. */
  private held = false;
  private skills: readonly PanelSkill[] = [];
  private readonly completions = h("ul", { id: "skill-completions", testid: "skill-completions", class: "skill-completions", attrs: { role: "listbox", "aria-label": "Skills", hidden: true } });

  /** `needModel`: Send was pressed with no model to send to; the text stays in the box (modelSetup.ts says so). */
  constructor(private readonly post: (m: WebviewToHost) => void, private readonly needModel: () => void = () => undefined) {
    this.send = h("vscode-button", { id: "send", testid: "send", attrs: { "aria-label": "Send", title: "Send (Enter)" }, on: { click: () => this.submit() } }, icon("send"), h("span", { text: "Send" }));
    const attach = h("vscode-button", {
      id: "attach",
      testid: "attach",
      attrs: { secondary: true, "icon-only": true, "aria-label": "Attach files", title: "Attach files…" },
      on: { click: () => this.post({ type: "attachFiles" }) },
    }, icon("attach"));
    this.input.addEventListener("input", () => this.complete());
    this.input.addEventListener("keydown", (ev) => {
      if (ev.key === "Tab" && !ev.shiftKey && !this.completions.hidden) {
        const first = this.matches()[0];
        if (first) {
          ev.preventDefault();
          this.choose(first.name);
          return;
        }
      }
      if (ev.key === "Enter" && !ev.shiftKey && !ev.altKey && !ev.isComposing) {
        ev.preventDefault();
        this.submit();
      }
    });
    this.model.addEventListener("change", () => {
      if (this.model.value) this.post({ type: "selectModel", name: this.model.value });
    });
    this.plan.addEventListener("change", () => this.post({ type: "setPlanMode", enabled: this.plan.checked }));
    this.root = h("form", { id: "composer", class: "composer", attrs: { "aria-label": "Compose" }, on: { submit: (ev) => { ev.preventDefault(); this.submit(); } } },
      this.attachList,
      this.completions,
      this.input,
      h("div", { class: "composer-row" }, attach, this.model, this.plan, h("span", { class: "spacer" }), this.send),
    );
  }

  /** Skills whose name starts with what follows a leading `/` (none once a space was typed). */
  private matches(): PanelSkill[] {
    const partial = partialSlashName(this.input.value);
    return partial === undefined ? [] : this.skills.filter((x) => x.enabled && x.user_invocable && x.name.startsWith(partial));
  }

  private complete(): void {
    const found = this.matches();
    this.completions.hidden = found.length === 0;
    this.completions.replaceChildren(...found.map((x) =>
      h("li", { class: "skill-completion", testid: "skill-completion", attrs: { role: "option", "data-name": x.name, title: x.description }, on: { mousedown: (ev) => { ev.preventDefault(); this.choose(x.name); } } },
        h("span", { class: "skill-name", text: `/${x.name}` }), h("span", { class: "muted", text: x.description }))));
  }

  private choose(name: string): void {
    this.input.value = `/${name} `;
    this.complete();
    this.input.focus();
  }

  private submit(): void {
    const text = this.input.value.trim();
    if (!text || this.active) return;
    if (!this.hostReady) {
      // Send before the host's first word (the panel just opened): an empty list means "not
      // heard yet". The text stays; update() sends it once `init` says what the models are.
      this.held = true;
      return;
    }
    if (this.models.length === 0) {
      this.needModel();
      return;
    }
    this.post({ type: "send", text });
    this.input.value = "";
    this.complete();
  }

  update(s: PanelState): void {
    this.active = isRunActive(s);
    if (s.skills !== this.skills) {
      this.skills = s.skills;
      this.complete();
    }
    this.send.toggleAttribute("disabled", this.active);
    this.send.title = this.active ? "A run is in progress" : "Send (Enter)";
    if (s.models !== this.models) {
      this.models = s.models;
      this.model.replaceChildren(...s.models.map((m) => h("vscode-option", { attrs: { value: m.name, description: m.supports_vision ? "vision" : undefined } }, m.label || m.name)));
      this.model.hidden = s.models.length === 0;
    }
    if (s.model !== null && this.model.value !== s.model) this.model.value = s.model;
    // The host's word on the selected model (tests and themes read it; the value is the widget's own).
    if (s.model !== null && this.model.dataset.model !== s.model) this.model.dataset.model = s.model;
    if (this.plan.checked !== s.planMode) this.plan.checked = s.planMode;
    if (s.hostReady && !this.hostReady) {
      this.hostReady = true;
      if (this.held) {
        this.held = false;
        this.submit();
      }
    }
    if (s.attachments !== this.attachments) {
      this.attachments = s.attachments;
      this.attachList.hidden = s.attachments.length === 0;
      this.attachList.replaceChildren(...s.attachments.map((f, index) =>
        h("li", { class: "attachment", testid: "attachment" },
          icon("file"), h("span", { class: "attachment-name", text: f.name }), h("span", { class: "muted", text: formatSize(f.size) }),
          iconButton("close", `Remove ${f.name}`, () => this.post({ type: "removeAttachment", index }), "remove-attachment"))));
    }
  }
}
