/**
 * The panel's Skills section on the host side (issue 24): the harness's `skills/list` and
 * `skills/setEnabled` as the webview may see them. The webview gets names, scopes, descriptions
 * and states only: a user skill's SKILL.md is outside the workspace, so its host path stays here,
 * behind "Open SKILL.md" by name (a name the list did not give is refused).
 */
import * as vscode from "vscode";
import type { PanelSkill } from "../../protocol/webview.js";
import type { SkillView } from "../../protocol/rpc.js";
import type { HarnessClient } from "../harnessClient.js";

export class PanelSkills {
  /** Loaded skill name → its SKILL.md, from the last list. */
  private paths = new Map<string, string>();

  constructor(
    private readonly harness: HarnessClient,
    private readonly folder: () => Promise<vscode.WorkspaceFolder>,
  ) {}

  async list(): Promise<PanelSkill[]> {
    const workspaceFolder = (await this.folder()).uri.fsPath;
    return this.shown((await this.harness.request("skills/list", { workspaceFolder })).skills);
  }

  async setEnabled(name: string, enabled: boolean): Promise<PanelSkill[]> {
    const workspaceFolder = (await this.folder()).uri.fsPath;
    return this.shown((await this.harness.request("skills/setEnabled", { workspaceFolder, name, enabled })).skills);
  }

  async open(name: string): Promise<void> {
    const path = this.paths.get(name);
    if (path === undefined) throw new Error(`No skill named "${name}" is listed for this workspace; refresh the Skills section.`);
    // A remote harness's skill in a folder this window does not share has no path here (remote/rewrite.ts).
    if (path === "") throw new Error(`The skill "${name}" is on the remote harness's machine; its SKILL.md cannot be opened from this window.`);
    await vscode.window.showTextDocument(vscode.Uri.file(path), { preview: true });
  }

  /**
   * Add Skill… (issue 30 item 5): asks a name (Agent Skills' lower-case-and-hyphens), writes
   * `.agents/skills/<name>/SKILL.md` in the workspace folder with the front matter to fill in, and
   * opens it. An existing skill folder is opened, never overwritten. The watcher (provider.ts)
   * brings it into the section.
   */
  async add(): Promise<void> {
    const folder = await this.folder();
    const name = await vscode.window.showInputBox({
      title: "DeerFlow: Add Skill",
      prompt: "The skill's name: lower-case letters, digits and hyphens (it becomes /name in the composer)",
      ignoreFocusOut: true,
      validateInput: (v) => (/^[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?$/.test(v.trim()) ? undefined : "Lower-case letters, digits and hyphens, e.g. release-notes"),
    });
    if (!name?.trim()) return;
    const file = vscode.Uri.joinPath(folder.uri, ".agents", "skills", name.trim(), "SKILL.md");
    const exists = await vscode.workspace.fs.stat(file).then(() => true, () => false);
    if (!exists) {
      const text = `---\nname: ${name.trim()}\ndescription: What this skill does and when the agent should use it (one or two sentences).\n---\n\n# ${name.trim()}\n\nThe steps the agent follows when it uses this skill.\n`;
      await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(text));
    }
    await vscode.window.showTextDocument(file, { preview: false });
  }

  private shown(views: readonly SkillView[]): PanelSkill[] {
    const loaded = views.filter((v): v is SkillView & { name: string; description: string } => v.status === "loaded" && v.name !== null && v.description !== null);
    this.paths = new Map(loaded.map((v) => [v.name, v.path]));
    return loaded.map((v) => ({ name: v.name, scope: v.scope, description: v.description, enabled: v.enabled, user_invocable: v.user_invocable, problems: v.diagnostics.length }));
  }
}
