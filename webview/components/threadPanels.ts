/**
 * The thread's side lists, under the messages: todos, presented artifacts (open in the editor,
 * reveal in the explorer) and the viewed-image cache (thumbnails fetched once per sha256, open,
 * Clear). Each is a <details> shown only when it has something, redrawn only when its slice of the
 * state changed identity.
 */
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import type { ArtifactItem, TodoItem, ViewedImageItem } from "../model/types.js";
import type { PanelState } from "../store.js";
import { baseName, formatSize, h, icon, iconButton, setText } from "./dom.js";

const TODO_ICON: Record<TodoItem["status"], string> = { pending: "circle-large-outline", in_progress: "record", completed: "pass-filled" };

function section(id: string, testid: string, label: string): { root: HTMLDetailsElement; count: HTMLElement; body: HTMLElement } {
  const count = h("span", { class: "section-count" });
  const body = h("div", { class: "section-body" });
  const root = h("details", { id, testid, class: "thread-section", attrs: { open: true, hidden: true } },
    h("summary", {}, h("span", { class: "section-label", text: label }), count), body);
  return { root, count, body };
}

export class ThreadPanels {
  readonly root = h("section", { class: "thread-panels", attrs: { "aria-label": "Thread details" } });
  private readonly todos = section("todos-section", "todos-section", "Todos");
  private readonly artifacts = section("artifacts-section", "artifacts-section", "Artifacts");
  private readonly images = section("viewed-images-section", "viewed-images-section", "Viewed images");
  private readonly artifactList = h("ul", { id: "artifacts", testid: "artifacts", class: "artifact-list", attrs: { "aria-label": "Artifacts" } });
  private readonly todoList = h("ul", { id: "todos", testid: "todos", class: "todo-list", attrs: { "aria-label": "Todos" } });
  private readonly thumbs = h("ul", { class: "thumbs", attrs: { "aria-label": "Viewed images" } });
  private readonly imageBox: HTMLElement;
  private last: { todos?: readonly TodoItem[] | null; artifacts?: readonly ArtifactItem[]; images?: readonly ViewedImageItem[]; urls?: PanelState["images"] } = {};
  private readonly requested = new Set<string>();

  constructor(private readonly post: (m: WebviewToHost) => void) {
    const clear = h("vscode-button", {
      testid: "clear-viewed-images",
      attrs: { secondary: true, "aria-label": "Clear", title: "Clear the viewed-image cache" },
      on: { click: () => this.post({ type: "clearViewedImages" }) },
    }, icon("clear-all"), h("span", { text: "Clear" }));
    this.imageBox = h("div", { id: "viewed-images", testid: "viewed-images", class: "viewed-images" }, this.thumbs, h("div", { class: "section-actions" }, clear));
    this.todos.body.append(this.todoList);
    this.artifacts.body.append(this.artifactList);
    this.images.body.append(this.imageBox);
    this.root.append(this.todos.root, this.artifacts.root, this.images.root);
  }

  update(s: PanelState): void {
    const t = s.thread;
    const todos = t?.todos ?? null;
    if (todos !== this.last.todos) {
      this.last.todos = todos;
      this.drawTodos(todos ?? []);
    }
    const artifacts = t?.artifacts ?? [];
    if (artifacts !== this.last.artifacts) {
      this.last.artifacts = artifacts;
      this.drawArtifacts(artifacts);
    }
    const images = t?.viewedImages ?? [];
    if (images !== this.last.images || s.images !== this.last.urls) {
      this.last.images = images;
      this.last.urls = s.images;
      this.drawImages(images, s.images);
    }
  }

  private drawTodos(todos: readonly TodoItem[]): void {
    this.todos.root.hidden = todos.length === 0;
    const done = todos.filter((x) => x.status === "completed").length;
    setText(this.todos.count, `${done}/${todos.length}`);
    this.todoList.replaceChildren(...todos.map((x) =>
      h("li", { class: `todo todo-${x.status}`, testid: "todo", attrs: { "data-status": x.status } },
        icon(TODO_ICON[x.status]),
        h("span", { class: "visually-hidden", text: `${x.status.replace("_", " ")}: ` }),
        h("span", { text: x.content }))));
  }

  private drawArtifacts(items: readonly ArtifactItem[]): void {
    const wasEmpty = this.artifacts.root.hidden;
    this.artifacts.root.hidden = items.length === 0;
    // The first artifact of a thread is news: make sure its section is open.
    if (wasEmpty && items.length > 0) this.artifacts.root.open = true;
    setText(this.artifacts.count, String(items.length));
    this.artifactList.replaceChildren(...items.map((a) => {
      const name = baseName(a.path);
      return h("li", { class: `artifact${a.exists ? "" : " missing"}`, testid: "artifact", attrs: { "data-path": a.path } },
        h("button", {
          class: "artifact-open",
          testid: "open-artifact",
          attrs: { type: "button", title: a.exists ? `Open ${a.path}` : `${a.path} (missing)`, "aria-label": `Open ${name}` },
          on: { click: () => this.post({ type: "openArtifact", path: a.path }) },
        }, icon(fileIcon(name)), h("span", { class: "artifact-name", text: name }), h("span", { class: "artifact-dir", text: dirName(a.path) })),
        iconButton("go-to-file", `Reveal ${name} in Explorer`, () => this.post({ type: "revealArtifact", path: a.path }), "reveal-artifact"));
    }));
  }

  private drawImages(images: readonly ViewedImageItem[], urls: PanelState["images"]): void {
    this.images.root.hidden = images.length === 0;
    setText(this.images.count, String(images.length));
    for (const img of images) {
      if (!urls.has(img.sha256) && !this.requested.has(img.sha256)) {
        this.requested.add(img.sha256);
        this.post({ type: "requestImage", sha256: img.sha256 });
      }
    }
    this.thumbs.replaceChildren(...images.map((img) => {
      const url = urls.get(img.sha256);
      const name = baseName(img.path);
      return h("li", { class: "thumb", testid: "viewed-image", attrs: { "data-path": img.path, "data-sha256": img.sha256 } },
        h("button", {
          class: "thumb-open",
          attrs: { type: "button", "aria-label": `Open ${name}`, title: `${img.path} · ${formatSize(img.size)}` },
          on: { click: () => this.post({ type: "openImage", path: img.path }) },
        },
        url ? h("img", { attrs: { src: url, alt: "" } }) : h("span", { class: "thumb-placeholder" }, icon(url === null ? "circle-slash" : "file-media")),
        h("span", { class: "thumb-label", text: name })));
    }));
  }
}

function dirName(path: string): string {
  const i = path.lastIndexOf("/");
  return i > 0 ? path.slice(0, i).replace(/^\/mnt\/user-data\//, "") : "";
}

function fileIcon(name: string): string {
  if (/\.(png|jpe?g|gif|webp|svg|bmp)$/i.test(name)) return "file-media";
  if (/\.(md|txt)$/i.test(name)) return "markdown";
  if (/\.(ts|js|py|json|html|css|sh)$/i.test(name)) return "file-code";
  return "file";
}
