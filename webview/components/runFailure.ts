/**
 * A failed model request (issue 30 item 2): the panel's one `role=alert`, above the composer. It
 * names the model and its endpoint, says what happened in the harness's words
 * (harness/models/requestFailure.ts, never the provider's raw text), and holds the next steps:
 * Retry (the host runs the thread's last prompt again), Show Logs (the full detail), and for a
 * 401/403 Set API Key (the host resolves the model's key name and runs the set-key command).
 * Shown while the thread's last run carries a failure; the next run's start removes it. The
 * element exists from the start but is hidden and has no role until there is something to say,
 * so nothing in the panel is an alert before a failure.
 */
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import type { ModelRequestFailure } from "../../extension/protocol/events.js";
import type { PanelState } from "../store.js";
import { h, icon, setText } from "./dom.js";

const HEADLINE: Record<ModelRequestFailure["kind"], string> = {
  connection_refused: "could not be reached",
  auth: "did not accept the API key",
  model_not_found: "was not found",
  timeout: "did not answer in time",
  other: "failed",
};

function button(label: string, codicon: string, testid: string, onClick: () => void): HTMLElement {
  return h("vscode-button", { testid, attrs: { "aria-label": label, secondary: testid !== "failure-retry" }, on: { click: onClick } }, icon(codicon), h("span", { text: label }));
}

export class RunFailure {
  readonly root: HTMLElement;
  private readonly headline = h("span", { class: "run-failure-headline", testid: "failure-headline" });
  private readonly summary = h("p", { class: "run-failure-summary", testid: "failure-summary" });
  private readonly setKey: HTMLElement;
  private shown: ModelRequestFailure | undefined;

  constructor(post: (m: WebviewToHost) => void) {
    this.setKey = button("Set API Key", "key", "failure-set-key", () => {
      if (this.shown) post({ type: "setApiKey", model: this.shown.model });
    });
    this.root = h("section", { id: "run-failure", testid: "run-failure", class: "run-failure", attrs: { hidden: true } },
      h("div", { class: "run-failure-head" }, icon("error"), this.headline),
      this.summary,
      h("div", { class: "run-failure-actions" },
        button("Retry", "refresh", "failure-retry", () => post({ type: "retry" })),
        this.setKey,
        button("Show Logs", "output", "failure-show-logs", () => post({ type: "showLogs" })),
      ));
  }

  update(s: PanelState): void {
    const failure = s.thread?.run.failure;
    if (failure === this.shown) return;
    this.shown = failure;
    this.root.hidden = !failure;
    if (!failure) {
      this.root.removeAttribute("role");
      return;
    }
    const where = failure.endpoint ? ` at ${failure.endpoint}` : "";
    setText(this.headline, `Model ${failure.model}${where} ${HEADLINE[failure.kind]}`);
    setText(this.summary, failure.summary);
    this.setKey.hidden = failure.kind !== "auth";
    // Set last, with the text in place: a screen reader announces the alert as it appears.
    this.root.setAttribute("role", "alert");
  }
}
