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
 *
 * Scopes (issue 21): the document shows each fact's `scope` and `workspace`, and lenses above
 * each fact say where it is given ("Only in <folder>", "Given to every workspace") and offer
 * "Promote to all workspaces" (memoryLenses.ts), as they do on a folder's own sections. Promoting
 * asks first: it is the one way something learnt in one folder reaches the others, and a command
 * can be run with arguments from places other than this lens. Editing `"scope"` and saving does
 * the same. When an extraction changes the memory (`memory/changed`) an open editor reloads.
 */
import * as vscode from "vscode";
import type { Ctx } from "./context.js";
import { HarnessRequestError } from "./harnessClient.js";
import { memoryLenses, promoteTargetOf } from "./memoryLenses.js";

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

/** The memory editor's lenses (memoryLenses.ts): each fact's scope, and promotion. */
class ScopeLenses implements vscode.CodeLensProvider {
  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    if (doc.uri.toString() !== MEMORY_URI.toString()) return [];
    return memoryLenses(doc.getText()).map((l) => {
      const range = new vscode.Range(l.line, 0, l.line, 0);
      // A lens without a command is a label (the scope); VS Code still needs a command object.
      return new vscode.CodeLens(range, l.promote ? { title: l.title, command: PROMOTE_COMMAND, arguments: [l.promote] } : { title: l.title, command: "" });
    });
  }
}

const PROMOTE_COMMAND = "deerflow.promoteMemory";

/** "Promote to all workspaces": asks, then `memory/promote`; the open editor reloads with the result. */
function promoteCommand(ctx: Ctx, fs: MemoryFileSystem): (arg: unknown) => Promise<boolean> {
  return async (arg) => {
    const what = promoteTargetOf(arg);
    if (!what) throw new Error("Nothing to promote: the lens names a fact or a workspace section.");
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === MEMORY_URI.toString());
    if (open?.isDirty) {
      void vscode.window.showWarningMessage("DeerFlow: save or revert your edits to the memory first, then promote.");
      return false;
    }
    const { memory } = await ctx.harness.request("memory/get", {});
    const detail =
      "factId" in what
        ? `"${memory.facts.find((f) => f.id === what.factId)?.content ?? what.factId}" is then given to the threads of every workspace, not only the one it was learnt in.`
        : `This folder's ${what.section} replaces the one every workspace is given:\n"${sectionText(memory, what.workspace, what.section)}"`;
    const promote = "Promote";
    const answer = await vscode.window.showWarningMessage("Give this to every workspace?", { modal: true, detail }, promote);
    if (answer !== promote) return false;
    await ctx.harness.request("memory/promote", "factId" in what ? { factId: what.factId } : { workspace: what.workspace, section: what.section });
    fs.touch();
    ctx.log.info(`Memory: ${"factId" in what ? `fact ${what.factId}` : what.section} promoted to every workspace.`);
    return true;
  };
}

function sectionText(memory: { workspaces?: Record<string, { user: Record<string, { summary: string }>; history: Record<string, { summary: string }> }> }, workspace: string, section: string): string {
  const [group, key] = section.split(".") as ["user" | "history", string];
  return memory.workspaces?.[workspace]?.[group][key]?.summary ?? "";
}

/**
 * One `deerflow-memory:` file system per extension context, registered when its commands are,
 * with the editor's lenses, the promote command, and the reload on `memory/changed`.
 */
const systems = new WeakMap<Ctx, MemoryFileSystem>();
function memoryFileSystem(ctx: Ctx): MemoryFileSystem {
  let fs = systems.get(ctx);
  if (!fs) {
    const created = new MemoryFileSystem(ctx);
    fs = created;
    ctx.extension.subscriptions.push(
      vscode.workspace.registerFileSystemProvider(MEMORY_SCHEME, created, { isCaseSensitive: true }),
      vscode.languages.registerCodeLensProvider({ scheme: MEMORY_SCHEME }, new ScopeLenses()),
      vscode.commands.registerCommand(PROMOTE_COMMAND, promoteCommand(ctx, created)),
      ctx.harness.onNotification("memory/changed", () => created.touch()),
    );
    systems.set(ctx, fs);
  }
  return fs;
}

/** "DeerFlow: Open Memory": the memory as an editable JSON document. */
export function openMemoryCommand(ctx: Ctx): () => Promise<vscode.TextEditor> {
  memoryFileSystem(ctx);
  return async () => vscode.window.showTextDocument(await vscode.workspace.openTextDocument(MEMORY_URI), { preview: false });
}

/**
 * "DeerFlow: Forget Memory": always a modal confirmation, then everything is cleared. Arguments
 * are ignored on purpose: a command can be run with arguments by other extensions, keybindings
 * and `command:` links in rendered Markdown, and none of them may forget the user's memory
 * without the user saying so (an earlier `true` argument skipped the dialog).
 */
export function forgetMemoryCommand(ctx: Ctx): () => Promise<boolean> {
  const fs = memoryFileSystem(ctx);
  return async () => {
    const forget = "Forget";
    const answer = await vscode.window.showWarningMessage(
      "Forget everything DeerFlow remembers about you?",
      { modal: true, detail: "The stored memory (facts and summaries, of every workspace) is emptied and queued updates are dropped. This cannot be undone." },
      forget,
    );
    if (answer !== forget) return false;
    await ctx.harness.request("memory/clear", {});
    fs.touch();
    ctx.log.info("Memory cleared (DeerFlow: Forget Memory).");
    void vscode.window.showInformationMessage("DeerFlow: memory cleared.");
    return true;
  };
}
