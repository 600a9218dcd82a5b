/**
 * Whose `/mnt/user-data/{uploads,outputs}` the shared container currently shows.
 *
 * The container is per folder, the uploads/outputs are per thread, and a path like
 * `/mnt/user-data/outputs` can name only one directory at a time inside one container (a
 * per-command mount namespace needs CAP_SYS_ADMIN, which a dev container does not have, and a
 * per-process trick through /proc/self/fd breaks as soon as a program closes inherited fds).
 * So the two symlinks are switched per thread, and this gate makes the switch safe:
 *
 * - commands of the thread whose view is installed run concurrently, with no extra cost;
 * - a command of another thread waits until the installed thread's commands in flight have
 *   finished, then the view is switched (one root exec) and all waiting commands of that
 *   thread are let in together;
 * - FIFO by thread: once another thread waits, new commands of the installed thread queue
 *   behind it, so neither thread starves.
 *
 * The cost is that two threads of one folder do not run commands at the same instant (each
 * command is bounded by its timeout), and a background process a thread left running sees the
 * view of whichever thread ran last. Both are documented for the user; correctness of the
 * model's verbatim paths wins over parallelism between threads of one folder.
 */
import { asError } from "./errors.js";

interface Waiter {
  readonly threadId: string;
  readonly admit: () => void;
}

export class ThreadViewGate {
  private viewThread: string | undefined;
  private viewGeneration = -1;
  private viewReady: Promise<void> = Promise.resolve();
  private active = 0;
  private readonly waiters: Waiter[] = [];

  /**
   * @param install switches the container's symlinks to a thread's dirs.
   * @param generation changes whenever the container was (re)created or restarted: the view is
   *   then installed again even for the same thread.
   */
  constructor(
    private readonly install: (threadId: string) => Promise<void>,
    private readonly generation: () => number,
  ) {}

  /** Resolves once the thread's view is installed; the caller must call `leave()` exactly once after. */
  async enter(threadId: string, signal?: AbortSignal): Promise<void> {
    if (this.waiters.length === 0 && (this.active === 0 || this.viewThread === threadId)) {
      await this.admit(threadId);
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(asError(signal?.reason));
        this.pump();
      };
      const waiter: Waiter = {
        threadId,
        admit: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      if (signal?.aborted) {
        reject(asError(signal.reason));
        return;
      }
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
    await this.admit(threadId, true);
  }

  leave(): void {
    this.active--;
    this.pump();
  }

  /** Forget the installed view (the container was recreated); the next entrant installs again. */
  reset(): void {
    this.viewThread = undefined;
  }

  /** Counted as active before the install resolves, so that no other thread can switch under it. */
  private async admit(threadId: string, alreadyCounted = false): Promise<void> {
    if (!alreadyCounted) this.active++;
    const generation = this.generation();
    if (this.viewThread !== threadId || this.viewGeneration !== generation) {
      this.viewThread = threadId;
      this.viewGeneration = generation;
      this.viewReady = this.install(threadId);
      // A failed install must be retried by the next entrant, not remembered as done.
      this.viewReady.catch(() => {
        if (this.viewThread === threadId) this.viewThread = undefined;
      });
    }
    try {
      await this.viewReady;
    } catch (err) {
      this.leave();
      throw err;
    }
  }

  /** When nothing runs, let in every waiter of the first waiting thread. */
  private pump(): void {
    if (this.active > 0) return;
    const first = this.waiters[0];
    if (!first) return;
    const batch = this.waiters.filter((w) => w.threadId === first.threadId);
    for (const w of batch) this.waiters.splice(this.waiters.indexOf(w), 1);
    this.active += batch.length;
    for (const w of batch) w.admit();
  }
}
