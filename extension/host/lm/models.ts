/**
 * The vscode.lm models the picker offers beside the configured ones (issue 25), as
 * `vscode-lm:<vendor>/<family>` (what the harness resolves, models/factory.ts vscodeLmModel).
 * Kept current from `lm.onDidChangeChatModels`: a provider extension may register late, and
 * Copilot's models appear once the user signs in. Listing sends no request and costs nothing.
 */
import * as vscode from "vscode";
import { VSCODE_LM_PREFIX } from "../../protocol/lm.js";
import type { ModelChoice } from "../../protocol/webview.js";
import { errorText } from "../harnessClient.js";

export class LmModels implements vscode.Disposable {
  private list: ModelChoice[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  private readonly subscription: vscode.Disposable;
  /** The list changed (after the first look too). */
  readonly onDidChange = this.changed.event;

  constructor(private readonly log: vscode.LogOutputChannel) {
    this.subscription = vscode.lm.onDidChangeChatModels(() => void this.refresh());
    void this.refresh();
  }

  choices(): ModelChoice[] {
    return this.list;
  }

  async refresh(): Promise<void> {
    try {
      const models = await vscode.lm.selectChatModels();
      const seen = new Set<string>();
      this.list = [];
      for (const m of models) {
        const name = `${VSCODE_LM_PREFIX}${m.vendor}/${m.family}`;
        if (seen.has(name)) continue;
        seen.add(name);
        this.list.push({ name, label: `${m.name} (vscode.lm ${m.vendor}/${m.family})`, supports_vision: false });
      }
    } catch (err) {
      this.log.warn(`Listing the VS Code language models: ${errorText(err)}`);
      this.list = [];
    }
    this.changed.fire();
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}
