/**
 * The turn-capped ending (issue 20): the last run used its budget of model turns
 * (`deerflow.maxTurnsPerRun`), every tool call of its last turn answered. The bar above the
 * composer says so and offers Continue, which starts the next run on the thread through the
 * host's normal run/start with the prompt "Continue" (the host checks the thread is still
 * turn-capped first). Shown only while store.canContinue holds: it goes once Continue is pressed,
 * once any other run starts, and it comes back after a reload (the capped message is in the
 * thread's snapshot).
 */
import type { PanelState } from "../store.js";
import { canContinue } from "../store.js";
import { h, icon } from "./dom.js";

export const CONTINUE_EXPLAINED =
  "Continue starts the next run on this thread with the prompt \u201cContinue\u201d: the agent picks up where it stopped, with a fresh turn budget.";

export class ContinueBar {
  readonly root: HTMLElement;
  private shown = false;

  constructor(onContinue: () => void) {
    const button = h("vscode-button", {
      id: "continue-run",
      testid: "continue-run",
      attrs: { "aria-label": "Continue", title: CONTINUE_EXPLAINED },
      on: { click: () => onContinue() },
    }, icon("debug-continue"), h("span", { text: "Continue" }));
    this.root = h("section", {
      id: "turn-capped",
      testid: "turn-capped",
      class: "turn-capped",
      attrs: { "aria-label": "The run stopped at its turn budget", hidden: true },
    },
    h("div", { class: "turn-capped-head" }, icon("debug-pause"), h("span", { text: "The run stopped at its turn budget" })),
    h("p", { class: "turn-capped-text", testid: "turn-capped-text", text: `It used every model turn it may make in one run (the deerflow.maxTurnsPerRun setting); each tool call it made was answered. ${CONTINUE_EXPLAINED}` }),
    h("div", { class: "turn-capped-actions" }, button));
  }

  update(s: PanelState): void {
    const show = canContinue(s);
    if (show === this.shown) return;
    this.shown = show;
    this.root.hidden = !show;
  }
}
