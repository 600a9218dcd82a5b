/**
 * "Changed files (n)" per run (issue 13): each file the run's file tools wrote, with Open Diff
 * (before the run ↔ now, in VS Code's diff editor) and Revert, and Revert All for the run. The
 * host lists the thread's recent runs that changed files (newest first, the newest open); a
 * revert the harness refuses (the file changed since, a protected path, …) shows its reason
 * under the file until the next revert of that run.
 */
import type { RevertOutcome } from "../../extension/protocol/changes.js";
import type { RunChanges } from "../../extension/protocol/review.js";
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import { baseName, h, icon, iconButton } from "./dom.js";

const STATUS_LETTER = { added: "A", modified: "M", deleted: "D" } as const;

function when(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? "" : d.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

export class ChangedFiles {
  readonly root = h("section", { id: "changed-files", testid: "changed-files", class: "changed-files", attrs: { "aria-label": "Changed files", hidden: true } });
  private runs: RunChanges[] = [];
  private readonly outcomes = new Map<string, Map<string, RevertOutcome>>();
  /** Runs the user collapsed or expanded (by default only the newest is open). */
  private readonly open = new Map<string, boolean>();

  constructor(private readonly post: (m: WebviewToHost) => void) {}

  show(runs: RunChanges[]): void {
    const ids = new Set(runs.map((r) => r.run_id));
    for (const id of [...this.outcomes.keys()]) if (!ids.has(id)) this.outcomes.delete(id);
    this.runs = runs;
    this.draw();
  }

  reverted(runId: string, files: RevertOutcome[]): void {
    this.outcomes.set(runId, new Map(files.map((f) => [f.path, f])));
    this.draw();
  }

  private draw(): void {
    this.root.hidden = this.runs.length === 0;
    this.root.replaceChildren(...this.runs.map((run, i) => this.runSection(run, i === 0)));
  }

  private runSection(run: RunChanges, newest: boolean): HTMLElement {
    const outcomes = this.outcomes.get(run.run_id);
    const revertable = run.files.filter((f) => !f.reverted);
    const revertAll = h("vscode-button", {
      testid: "revert-all",
      attrs: { secondary: true, "aria-label": "Revert All", title: "Restore every file of this run as it was before the run", disabled: revertable.length === 0 },
      on: { click: (ev) => {
        ev.preventDefault();
        this.post({ type: "revertChanges", runId: run.run_id });
      } },
    }, icon("discard"), h("span", { text: "Revert All" }));
    const details = h("details", { class: "thread-section run-changes", testid: "run-changes", attrs: { "data-run-id": run.run_id, open: this.open.get(run.run_id) ?? newest } },
      h("summary", {},
        h("span", { class: "section-label", text: `Changed files (${run.files.length})` }),
        h("span", { class: "run-changes-when", text: when(run.created_at) })),
      h("div", { class: "section-body" },
        h("ul", { class: "changed-file-list", attrs: { "aria-label": "Changed files" } }, ...run.files.map((f) => {
          const name = baseName(f.path);
          const outcome = outcomes?.get(f.path);
          return h("li", { class: `changed-file changed-${f.status}${f.reverted ? " reverted" : ""}`, testid: "changed-file", attrs: { "data-path": f.path, "data-status": f.status } },
            h("span", { class: "changed-status", text: STATUS_LETTER[f.status], attrs: { title: f.status } }),
            h("span", { class: "changed-name", text: name, attrs: { title: f.path } }),
            h("span", { class: "artifact-dir", text: f.path.replace(/^\/mnt\/user-data\//, "").slice(0, -name.length).replace(/\/$/, "") }),
            f.reverted ? h("span", { class: "changed-reverted", testid: "changed-reverted", text: "reverted" }) : null,
            iconButton("diff", `Open Diff of ${name}`, () => this.post({ type: "openChangeDiff", runId: run.run_id, path: f.path }), "open-change-diff"),
            f.reverted ? null : iconButton("discard", `Revert ${name}`, () => this.post({ type: "revertChanges", runId: run.run_id, paths: [f.path] }), "revert-file"),
            outcome?.outcome === "refused"
              ? h("div", { class: "revert-refused", testid: "revert-refused", attrs: { role: "alert" } }, icon("warning"), h("span", { text: `Not reverted: ${outcome.reason ?? outcome.code ?? "refused"}` }))
              : null);
        })),
        h("div", { class: "section-actions" }, revertAll)));
    details.addEventListener("toggle", () => this.open.set(run.run_id, details.open));
    return details;
  }
}
