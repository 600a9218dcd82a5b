/**
 * How many event streams (SSE: `runs/stream`, `…/runs/{id}/stream`) `deerflow serve` holds open at
 * once per token (issue 31 item 6). serve has one token, and the web UI's sessions are signed with
 * it, so the cap is the server process's. Each stream holds a socket, a journal subscription and,
 * for `values`, the thread's state; a client that loops on reconnects must not hold the server.
 *
 * 64: a browser holds at most 6 HTTP/1.1 connections per server, so one DeerFlow UI tab never
 * needs more than 6 streams; 64 leaves a team's tabs, SDK clients and joins room, and the
 * security review measured 300 streams at +40 MB (well within a small machine). The stream past
 * it is a 429 before anything is admitted (no run is started for a `runs/stream` refused here).
 */
import { HarnessError } from "../errors.js";

export const MAX_STREAMS_PER_TOKEN = 64;

export class StreamSlots {
  private open = 0;

  constructor(private readonly max = MAX_STREAMS_PER_TOKEN) {}

  /** Takes a slot, or refuses (`too_many_streams`, a 429); the returned function frees it, once. */
  acquire(): () => void {
    if (this.open >= this.max) {
      throw new HarnessError(
        "too_many_streams",
        `This server already has ${this.max} event streams open for its token, its limit. A stream ends with its run or when its client disconnects: close one and try again.`,
      );
    }
    this.open += 1;
    let freed = false;
    return () => {
      if (freed) return;
      freed = true;
      this.open -= 1;
    };
  }

  get count(): number {
    return this.open;
  }
}
