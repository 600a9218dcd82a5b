/**
 * Retry after a failed model request (issue 30 item 2), the host's half: which prompt the retry
 * sends. The panel's alert has a Retry button; the host runs the thread's last prompt again
 * through the same runs/start as a typed message. The prompt is the one this window sent, when it
 * sent one on that thread; otherwise (a reload, another window) the text of the thread's last
 * human message as its state holds it.
 * No `vscode` import: unit-tested in test/unit/host/retryRun.test.ts.
 */
import type { ThreadStateView } from "../../protocol/rpc.js";

export type RetryPrompt = { ok: true; prompt: string } | { ok: false; reason: string };

export function retryPrompt(state: ThreadStateView, sent: string | undefined): RetryPrompt {
  const run = state.active_run;
  if (run && (run.status === "pending" || run.status === "running")) {
    return { ok: false, reason: "A run is already active on this thread: wait for it to end, or cancel it." };
  }
  if (sent && sent.trim() !== "") return { ok: true, prompt: sent };
  for (let i = state.messages.length - 1; i >= 0; i--) {
    const m = state.messages[i]!;
    if (m.type !== "human" || m.additional_kwargs?.hide_from_ui === true) continue;
    const text = typeof m.content === "string"
      ? m.content
      : m.content.flatMap((b) => (b.type === "text" && typeof b.text === "string" ? [b.text] : [])).join("\n");
    if (text.trim() !== "") return { ok: true, prompt: text };
  }
  return { ok: false, reason: "Nothing to retry: this thread has no message yet. Type one below." };
}
