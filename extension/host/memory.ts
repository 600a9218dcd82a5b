/**
 * "DeerFlow: Open Memory" and "DeerFlow: Forget Memory" (issue 15): the user sees and controls
 * what DeerFlow remembers about them.
 *
 * The memory opens as an editable JSON document, `deerflow-memory:/memory.json`, served by a
 * FileSystemProvider over the harness's `memory/get` / `memory/set`: saving sends the whole
 * document, which the harness validates (a document that does not fit is refused with the field at
 * fault, and nothing stored changes) and scrubs of secrets; the editor then shows what was stored.
 * Invalid JSON is refused here, before anything is sent. The document's mtime is the stored
 * file's (`version`) and its size the document's, so a save over a document the harness rewrote
 * since the editor read it (an extraction after a run) is VS Code's ordinary save conflict
 * (compare / overwrite), never a silent loss of the new facts. (VS Code needs both a newer mtime
 * and a different size; a rewrite to exactly the same length would not be caught — an extraction
 * adds or rewrites text, so that is not expected in practice.) The memory file itself lives in the
 * extension's global storage (the harness's data directory), never in a workspace.
 */
import * as vscode from "vscode";
import type { Ctx } from "./context.js";
import { HarnessRequestError } from "./harnessClient.js";

export const MEMORY_SCHEME = "deerflow-memory";
export const MEMORY_URI = vscode.Uri.from({ scheme: MEMORY_SCHEME, path: "/memory.json" });

/** The document as the editor shows it. */
function render(memory: unknown): Uint8Array {
  return new TextEncoder().encode(`${JSON.stringify(memory, null, 2)}\n`);
}

class MemoryFileSystem implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  /**
   * Added to the stored file's version when we know the editor must reload although the file's
   * own version already reached it (a save the harness scrubbed): the mtime changes, VS Code reloads.
   */
  private bump = 0;

  constructor(private readonly ctx: Ctx) {}

  /** The stored document changed outside the editor (Forget, a scrubbed save): open editors reload it. */
  touch(): void {
    this.bump++;
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri: MEMORY_URI }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    this.only(uri);
    let version = 0;
    let size = 0;
    try {
      const got = await this.ctx.harness.request("memory/get", {});
      version = got.version;
      size = render(got.memory).byteLength;
    } catch {
      // A broken file: readFile says what is wrong.
    }
    // The real size matters: VS Code calls a save a conflict only when the file is newer AND its
    // etag (mtime + size) differs from what it read (files.ts `validateWriteFile`).
    return { type: vscode.FileType.File, ctime: 0, mtime: version + this.bump, size };
  }

  async readFile(uri: vscode.Uri): Promise<Uint8Array> {
    this.only(uri);
    try {
      const { memory } = await this.ctx.harness.request("memory/get", {});
      return render(memory);
    } catch (err) {
      // A broken memory file: say what is wrong; nothing is offered that could overwrite it.
      throw vscode.FileSystemError.Unavailable(`DeerFlow cannot show the memory: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  async writeFile(uri: vscode.Uri, content: Uint8Array): Promise<void> {
    this.only(uri);
    let memory: unknown;
    try {
      memory = JSON.parse(new TextDecoder().decode(content));
    } catch (err) {
      throw vscode.FileSystemError.NoPermissions(`The memory was not saved: it is not valid JSON (${err instanceof Error ? err.message : String(err)}). Fix it and save again.`);
    }
    let stored: unknown;
    try {
      ({ memory: stored } = await this.ctx.harness.request("memory/set", { memory }));
    } catch (err) {
      const why = err instanceof HarnessRequestError && err.code === "memory_invalid" ? err.message : `the harness refused it: ${err instanceof Error ? err.message : String(err)}`;
      throw vscode.FileSystemError.NoPermissions(`The memory was not saved: ${why}`);
    }
    this.ctx.log.info("Memory saved from the editor.");
    // What was stored differs (secrets scrubbed): once VS Code has finished this save (it reads
    // the new mtime right after writeFile), the editor is told to reload and shows what was stored.
    if (JSON.stringify(stored) !== JSON.stringify(memory)) {
      const saved = vscode.workspace.onDidSaveTextDocument((doc) => {
        if (doc.uri.toString() !== MEMORY_URI.toString()) return;
        saved.dispose();
        this.touch();
      });
    }
  }

  private only(uri: vscode.Uri): void {
    if (uri.path !== MEMORY_URI.path) throw vscode.FileSystemError.FileNotFound(uri);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [["memory.json", vscode.FileType.File]];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions("The memory is one document.");
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions('Use "DeerFlow: Forget Memory" to clear the memory.');
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions("The memory is one document.");
  }
}

/** One `deerflow-memory:` file system per extension context, registered when its commands are. */
const systems = new WeakMap<Ctx, MemoryFileSystem>();
function memoryFileSystem(ctx: Ctx): MemoryFileSystem {
  let fs = systems.get(ctx);
  if (!fs) {
    fs = new MemoryFileSystem(ctx);
    ctx.extension.subscriptions.push(vscode.workspace.registerFileSystemProvider(MEMORY_SCHEME, fs, { isCaseSensitive: true }));
    systems.set(ctx, fs);
  }
  return fs;
}

/** "DeerFlow: Open Memory": the memory as an editable JSON document. */
export function openMemoryCommand(ctx: Ctx): () => Promise<vscode.TextEditor> {
  memoryFileSystem(ctx);
  return async () => vscode.window.showTextDocument(await vscode.workspace.openTextDocument(MEMORY_URI), { preview: false });
}

/** "DeerFlow: Forget Memory": a modal confirmation, then everything is cleared. `true` as argument (a test, a keybinding) skips the dialog. */
export function forgetMemoryCommand(ctx: Ctx): (confirmed?: unknown) => Promise<boolean> {
  const fs = memoryFileSystem(ctx);
  return async (confirmed?: unknown) => {
    if (confirmed !== true) {
      const forget = "Forget";
      const answer = await vscode.window.showWarningMessage(
        "Forget everything DeerFlow remembers about you?",
        { modal: true, detail: "The stored memory (facts and summaries) is emptied and queued updates are dropped. This cannot be undone." },
        forget,
      );
      if (answer !== forget) return false;
    }
    await ctx.harness.request("memory/clear", {});
    fs.touch();
    ctx.log.info("Memory cleared (DeerFlow: Forget Memory).");
    void vscode.window.showInformationMessage("DeerFlow: memory cleared.");
    return true;
  };
}
