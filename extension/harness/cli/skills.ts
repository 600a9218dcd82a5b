/**
 * Skills from the command line (issue 24):
 * - `deerflow skills list --workspace DIR [--data-dir DIR]`: one JSON line per skill folder in the
 *   skill roots (name, scope, path, location, enabled, status, diagnostics; skills/views.ts);
 *   what concerns the roots as a whole (a broken extensions_config.json) goes to stderr;
 * - `deerflow skills enable|disable NAME --workspace DIR [--data-dir DIR]`: DeerFlow's
 *   `skills.<name>.enabled` in `<data-dir>/extensions_config.json`, as the panel's toggle.
 * The CLI's workspace is the operator's choice, so its project skills are listed (trusted).
 */
import { parse, UsageError, valueUsageError, workspaceArg, writeJsonLine } from "./args.js";
import { defaultDataDir } from "../store/db.js";
import { HarnessError } from "../errors.js";
import { loadHarnessConfig } from "../config/harnessConfig.js";
import { loadSkillCatalog, type SkillsContext } from "../skills/service.js";
import { writeSkillEnabled } from "../skills/enabledState.js";
import { skillViews } from "../skills/views.js";

const options = { workspace: { type: "string" }, "data-dir": { type: "string" } } as const;

export async function skillsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === "list") {
    const ctx = contextOf(parse(rest, options, "skills list"), "skills list");
    const catalog = await loadSkillCatalog(ctx);
    for (const d of catalog.diagnostics) process.stderr.write(`deerflow skills list: ${d.level}: ${d.message}\n`);
    for (const view of skillViews(catalog)) writeJsonLine(view);
    return 0;
  }
  if (sub === "enable" || sub === "disable") {
    const [name, ...flags] = rest;
    if (!name || name.startsWith("--")) throw new UsageError(`deerflow skills ${sub}: name the skill (deerflow skills ${sub} NAME --workspace DIR)`);
    const ctx = contextOf(parse(flags, options, `skills ${sub}`), `skills ${sub}`);
    const catalog = await loadSkillCatalog(ctx);
    if (!catalog.skills.some((s) => s.meta.name === name)) {
      process.stderr.write(`deerflow skills ${sub}: no skill named "${name}" in this workspace's skills\n`);
      return 1;
    }
    writeSkillEnabled(ctx.dataDir, name, sub === "enable");
    writeJsonLine({ name, enabled: sub === "enable" });
    return 0;
  }
  throw new UsageError("deerflow skills: use list, enable or disable (deerflow skills list --workspace DIR [--data-dir DIR])");
}

function contextOf(v: { workspace?: string; "data-dir"?: string }, command: string): SkillsContext {
  const workspaceFolder = workspaceArg(v.workspace, command);
  const dataDir = v["data-dir"] ?? defaultDataDir();
  let config;
  try {
    config = loadHarnessConfig(dataDir);
  } catch (err) {
    if (err instanceof HarnessError) throw valueUsageError(command, err.message);
    throw err;
  }
  return { workspaceFolder, workspaceTrusted: true, dataDir, ...(config.skills ? { config: config.skills } : {}), warn: (m) => process.stderr.write(`deerflow ${command}: ${m}\n`) };
}
