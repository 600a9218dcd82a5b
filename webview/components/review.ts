/**
 * The panel's review area (issue 13): approval cards above the composer, and the runs' changed
 * files. It has its own small state, fed straight from the host's review messages (the host
 * derives them from the thread's state and journal), so it draws only when one arrives and
 * never on the streaming path.
 */
import type { ReviewToWebview } from "../../extension/protocol/review.js";
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import { ApprovalCards } from "./approvals.js";
import { ChangedFiles } from "./changedFiles.js";
import { h } from "./dom.js";

export class ReviewArea {
  private readonly approvals: ApprovalCards;
  private readonly changes: ChangedFiles;
  readonly root: HTMLElement;

  constructor(post: (m: WebviewToHost) => void) {
    this.approvals = new ApprovalCards(post);
    this.changes = new ChangedFiles(post);
    this.root = h("div", { class: "review" }, this.changes.root, this.approvals.root);
  }

  receive(m: ReviewToWebview): void {
    switch (m.type) {
      case "approvals":
        return this.approvals.show(m.threadId, m.pending);
      case "changes":
        return this.changes.show(m.runs);
      case "reverted":
        return this.changes.reverted(m.runId, m.files);
    }
  }
}
