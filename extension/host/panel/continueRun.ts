/**
 * Continue after a turn-capped run (issue 20), the host's half: whether the thread's state allows
 * it. A run that used its budget of model turns ends `success` with `stop_reason: "turn_capped"`,
 * and the harness's last message on the thread is a visible AI message stamped with that reason
 * (`additional_kwargs.stop_reason`). That stamp is what is checked, from `threads/state` read at the
 * moment Continue is pressed, so a stale button (another window went on meanwhile) or the palette
 * command on a thread that did not stop there never starts a run by mistake. The webview shows the
 * button by the same stamp (webview/model/threadView.ts turnCappedKey).
 * No `vscode` import: unit-tested in test/unit/host/continueRun.test.ts.
 */
import type { ThreadStateView } from "../../protocol/rpc.js";
import type { WireMessage } from "../../protocol/events.js";

/** The prompt of the run Continue starts; the panel's bar says what it does. */
export const CONTINUE_PROMPT = "Continue";

export type ContinueCheck = { ok: true } | { ok: false; reason: string };

/** Messages the UI never shows (DeerFlow's hide_from_ui injections, system prompts). */
function hidden(m: WireMessage): boolean {
  return m.type === "system" || m.type === "remove" || m.additional_kwargs?.hide_from_ui === true;
}

export function continueCheck(state: ThreadStateView): ContinueCheck {
  const run = state.active_run;
  if (run && (run.status === "pending" || run.status === "running")) {
    return { ok: false, reason: "A run is already active on this thread: wait for it to end, or cancel it." };
  }
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i]!;
    if (hidden(m)) continue;
    if (m.type === "ai" && m.additional_kwargs?.stop_reason === "turn_capped") return { ok: true };
    break;
  }
  return { ok: false, reason: "Nothing to continue: the last run on this thread did not stop at its turn budget. Type a message to go on." };
}
