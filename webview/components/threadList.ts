/**
 * Threads of the workspace's folders (grouped by folder when there are several): switch, rename
 * inline, delete with a second confirming press (webviews have no confirm()).
 */
import type { ThreadSummary } from "../../extension/protocol/rpc.js";
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import { baseName, h, icon, iconButton } from "./dom.js";

export function threadLabel(t: Pick<ThreadSummary, "title">): string {
  return t.title?.trim() || "Untitled thread";
}

export class ThreadList {
  readonly root = h("nav", { id: "thread-list", testid: "thread-list", class: "thread-list", attrs: { "aria-label": "Threads", hidden: true } });
  private threads: readonly ThreadSummary[] = [];
  private active: string | null = null;
  private renaming: string | null = null;
  private confirming: string | null = null;

  constructor(private readonly post: (m: WebviewToHost) => void, private readonly onPicked: () => void) {}

  update(threads: readonly ThreadSummary[], active: string | null): void {
    if (threads === this.threads && active === this.active) return;
    this.threads = threads;
    this.active = active;
    this.draw();
  }

  private draw(): void {
    const focused = document.activeElement instanceof HTMLElement && this.root.contains(document.activeElement) ? document.activeElement.dataset.focusKey : undefined;
    const folders = [...new Set(this.threads.map((t) => t.workspace_folder))];
    const groups = folders.map((folder) => {
      const list = h("ul", { class: "thread-group", attrs: { "aria-label": baseName(folder) } },
        ...this.threads.filter((t) => t.workspace_folder === folder).map((t) => this.row(t)));
      return folders.length > 1 ? h("div", {}, h("div", { class: "thread-folder", text: baseName(folder), attrs: { title: folder } }), list) : list;
    });
    this.root.replaceChildren(...(groups.length > 0 ? groups : [h("p", { class: "muted", text: "No threads yet." })]));
    if (focused) this.root.querySelector<HTMLElement>(`[data-focus-key="${CSS.escape(focused)}"]`)?.focus();
  }

  private row(t: ThreadSummary): HTMLElement {
    const label = threadLabel(t);
    const current = t.thread_id === this.active;
    const li = h("li", { class: `thread-item${current ? " current" : ""}`, testid: "thread-item", attrs: { "data-thread-id": t.thread_id } });
    if (this.renaming === t.thread_id) {
      const input = h("input", { class: "rename-input", attrs: { type: "text", "aria-label": "Thread title", maxlength: "500", value: t.title ?? "" } });
      const finish = (commit: boolean): void => {
        if (this.renaming !== t.thread_id) return;
        this.renaming = null;
        const title = input.value.trim();
        if (commit && title && title !== t.title) this.post({ type: "renameThread", threadId: t.thread_id, title });
        this.draw();
        this.root.querySelector<HTMLElement>(`[data-focus-key="open:${CSS.escape(t.thread_id)}"]`)?.focus();
      };
      input.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter") { ev.preventDefault(); finish(true); }
        if (ev.key === "Escape") { ev.preventDefault(); ev.stopPropagation(); finish(false); }
      });
      input.addEventListener("blur", () => finish(true));
      li.append(input);
      queueMicrotask(() => { input.focus(); input.select(); });
      return li;
    }
    const open = h("button", {
      class: "thread-open",
      attrs: { type: "button", "aria-current": current ? "true" : undefined, "data-focus-key": `open:${t.thread_id}`, title: label },
      on: { click: () => { if (!current) this.post({ type: "selectThread", threadId: t.thread_id }); this.onPicked(); } },
    }, t.active_run && (t.active_run.status === "running" || t.active_run.status === "pending") ? icon("loading", "codicon-modifier-spin") : icon("comment-discussion"), h("span", { class: "thread-title-text", text: label }));
    const rename = iconButton("edit", `Rename thread "${label}"`, () => { this.renaming = t.thread_id; this.confirming = null; this.draw(); }, "rename-thread");
    rename.dataset.focusKey = `rename:${t.thread_id}`;
    let del: HTMLButtonElement;
    if (this.confirming === t.thread_id) {
      del = h("button", { class: "danger-button", testid: "confirm-delete-thread", attrs: { type: "button", "aria-label": `Confirm delete "${label}"`, "data-focus-key": `del:${t.thread_id}` },
        on: {
          click: () => { this.confirming = null; this.post({ type: "deleteThread", threadId: t.thread_id }); this.draw(); },
          blur: () => { if (this.confirming === t.thread_id) { this.confirming = null; this.draw(); } },
        } }, icon("trash"), h("span", { text: "Delete?" }));
    } else {
      del = iconButton("trash", `Delete thread "${label}"`, () => { this.confirming = t.thread_id; this.draw(); }, "delete-thread");
      del.dataset.focusKey = `del:${t.thread_id}`;
    }
    li.append(open, h("span", { class: "thread-actions" }, rename, del));
    return li;
  }
}
