/**
 * Which runs are active, as far as this window knows (it started them, or the harness said one
 * ended). Feeds the status bar; the panel's own status comes from its thread's events.
 */
import * as vscode from "vscode";

export class RunTracker implements vscode.Disposable {
  private readonly active = new Map<string, { threadId: string }>();
  private readonly changed = new vscode.EventEmitter<number>();
  readonly onDidChange = this.changed.event;

  started(runId: string, threadId: string): void {
    if (this.active.has(runId)) return;
    this.active.set(runId, { threadId });
    this.changed.fire(this.active.size);
  }

  ended(runId: string): void {
    if (this.active.delete(runId)) this.changed.fire(this.active.size);
  }

  /** The harness restarted: its runs were interrupted (the run manager marks them). */
  clear(): void {
    if (this.active.size === 0) return;
    this.active.clear();
    this.changed.fire(0);
  }

  get count(): number {
    return this.active.size;
  }

  dispose(): void {
    this.changed.dispose();
  }
}
