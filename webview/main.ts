/**
 * Webview entry (bundled to dist/webview.js). Host messages are validated, folded into the store,
 * and rendered at most once per animation frame, so a burst of token events costs one paint.
 * After a render {threadId, lastSeq} is saved with setState (a new thread at once, lastSeq at most
 * once a second), so a reloaded panel reopens the same thread; the messages themselves come back
 * from the host (state + journal replay).
 */
import "@vscode-elements/elements/dist/vscode-button/index.js";
import "@vscode-elements/elements/dist/vscode-checkbox/index.js";
import "@vscode-elements/elements/dist/vscode-single-select/index.js";
import "@vscode-elements/elements/dist/vscode-option/index.js";
import { App } from "./components/app.js";
import { ReviewArea } from "./components/review.js";
import { parseReviewMessage } from "./components/reviewGuard.js";
import { parseHostMessage } from "./model/guard.js";
import { dismissNotice, initialState, markContinued, persisted, reduce } from "./store.js";
import type { PanelState } from "./store.js";
import { connect } from "./vscodeApi.js";
import type { SavedState } from "./vscodeApi.js";

const port = connect();
let state: PanelState = initialState;
let frame = 0;
let saved: SavedState = port.saved();
// setState is not free: VS Code's webview host stores it (and persists it) on the workbench's
// thread, which is this document's thread too. While tokens stream lastSeq moves every frame, and
// saving it each time cost a long task now and then; it only tells the host how far a reloaded
// document had got (a log line), so it is saved at most once a second. A new thread id is saved
// at once: it is what a reload reopens.
const SAVE_EVERY_MS = 1000;
let pending: SavedState | undefined;
let saveTimer: ReturnType<typeof setTimeout> | undefined;

// Approval cards and changed files keep their own state and draw when their messages arrive.
const review = new ReviewArea((m) => port.post(m));
const continueRun = (): void => {
  dispatch(markContinued(state));
  port.post({ type: "continueRun" });
};
const app = new App(document.getElementById("app") ?? document.body, (m) => port.post(m), schedule, () => dispatch(dismissNotice(state)), continueRun, [review.root]);

function schedule(): void {
  if (frame === 0) frame = requestAnimationFrame(paint);
}

function dispatch(next: PanelState): void {
  if (next === state) return;
  state = next;
  schedule();
}

function paint(): void {
  frame = 0;
  try {
    app.render(state);
  } catch (err) {
    // A rendering bug must not take the panel down with it: the next state gets another try.
    console.error("DeerFlow panel: render failed", err);
  }
  const p = persisted(state);
  if (p.threadId !== saved.threadId) save(p);
  else if (p.lastSeq !== saved.lastSeq) pending = p;
  if (pending && saveTimer === undefined) {
    saveTimer = setTimeout(() => {
      if (pending) save(pending);
    }, SAVE_EVERY_MS);
  }
}

function save(p: SavedState): void {
  clearTimeout(saveTimer);
  saveTimer = undefined;
  pending = undefined;
  saved = p;
  port.save(p);
}

window.addEventListener("message", (ev: MessageEvent<unknown>) => {
  const reviewMsg = parseReviewMessage(ev.data);
  if (reviewMsg) {
    review.receive(reviewMsg);
    return;
  }
  const msg = parseHostMessage(ev.data);
  if (!msg) return;
  try {
    dispatch(reduce(state, msg));
  } catch (err) {
    console.warn("DeerFlow panel: ignoring a host message the store could not apply", msg.type, err);
  }
});

// Ctrl/Cmd+L focuses the message box from anywhere in the panel (as VS Code's chat does).
window.addEventListener("keydown", (ev) => {
  if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === "l") {
    ev.preventDefault();
    app.focusInput();
  }
});

schedule();
// This document is new and holds no messages: the host answers with `state`, then the journal
// from there. The saved lastSeq says how far the previous document had got (the host logs it).
port.post({ type: "ready", ...saved });
