/**
 * `skills/list` and `skills/setEnabled` (issue 24): the panel's Skills section. The list is read
 * fresh each time (the same loader a run uses, skills/service.ts), with the workspace's trust as
 * the host reported it: project skills only in a trusted workspace. Enable/Disable writes the
 * user's `<data-dir>/extensions_config.json` (DeerFlow's `skills.<name>.enabled`), from the next
 * run on; an unknown name is refused so a typo never leaves a stray entry.
 */
import type { RequestParams, RequestResult } from "../../protocol/rpc.js";
import { HarnessError } from "../errors.js";
import { loadSkillCatalog, type SkillsContext } from "../skills/service.js";
import { writeSkillEnabled } from "../skills/enabledState.js";
import { skillViews } from "../skills/views.js";
import type { Logger } from "./logger.js";
import type { Session } from "./session.js";
import type { Workspaces } from "./workspaces.js";

function context(workspaces: Workspaces, session: Session, log: Logger, workspaceFolder: string): SkillsContext {
  const ws = workspaces.get(workspaceFolder);
  const config = session.config.skills;
  return { workspaceFolder: ws.folder, workspaceTrusted: session.settings.workspace_trusted, dataDir: session.dataDir, ...(config ? { config } : {}), warn: (m) => log.warn(m) };
}

export async function listSkills(workspaces: Workspaces, session: Session, log: Logger, p: RequestParams<"skills/list">): Promise<RequestResult<"skills/list">> {
  const catalog = await loadSkillCatalog(context(workspaces, session, log, p.workspaceFolder));
  return { skills: skillViews(catalog), diagnostics: [...catalog.diagnostics] };
}

export async function setSkillEnabled(workspaces: Workspaces, session: Session, log: Logger, p: RequestParams<"skills/setEnabled">): Promise<RequestResult<"skills/setEnabled">> {
  const ctx = context(workspaces, session, log, p.workspaceFolder);
  const before = await loadSkillCatalog(ctx);
  if (!before.skills.some((s) => s.meta.name === p.name)) throw new HarnessError("skill_not_found", `No skill named "${p.name}" in this workspace's skills.`);
  const file = writeSkillEnabled(session.dataDir, p.name, p.enabled);
  log.info(`Skill "${p.name}" ${p.enabled ? "enabled" : "disabled"} (${file}).`);
  const after = await loadSkillCatalog(ctx);
  return { skills: skillViews(after), diagnostics: [...after.diagnostics] };
}
