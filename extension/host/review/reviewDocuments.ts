/**
 * Read-only documents for the review diffs (issue 13): the current and proposed content of a
 * pending edit, and a changed file's content before its run. They live only in memory, under a
 * DeerFlow-specific scheme, so "Open Diff" never writes a proposal to disk, and a document from
 * a content provider is read-only in VS Code (no Save, no edits).
 */
import { randomUUID } from "node:crypto";
import { posix } from "node:path";
import * as vscode from "vscode";

export const REVIEW_SCHEME = "deerflow-review";
/** The diffs one opens in a session are few; older contents go (their tabs then say so). */
const KEEP = 64;

export class ReviewDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, this);
  }

  /**
   * A document with `content`, named after `virtualPath`'s file (so the editor picks its
   * language) and labelled `label` ("before", "proposed").
   */
  put(virtualPath: string, label: string, content: string): vscode.Uri {
    const key = randomUUID();
    this.contents.set(key, content);
    for (const old of this.contents.keys()) {
      if (this.contents.size <= KEEP) break;
      this.contents.delete(old);
    }
    const name = posix.basename(virtualPath) || "file";
    return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${key}/${name}`, query: label });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const key = uri.path.split("/")[1] ?? "";
    return this.contents.get(key) ?? "(DeerFlow no longer holds this content: open the diff again from the panel.)";
  }

  dispose(): void {
    this.registration.dispose();
    this.contents.clear();
  }
}
