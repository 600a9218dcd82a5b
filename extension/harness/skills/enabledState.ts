/**
 * Which skills are enabled: DeerFlow's `extensions_config.json` key `skills.<name>.enabled` (a
 * skill with no entry is enabled, `ExtensionsConfig.is_skill_enabled`), re-read on every load.
 *
 * Files read, in this order: the user's file, located by the one rule MCP uses too
 * (trust/extensionsConfig.ts: the file `DEER_FLOW_EXTENSIONS_CONFIG_PATH` names, else
 * `<data-dir>/extensions_config.json`, else the legacy `mcp_config.json`), which the panel's
 * toggle and `skills enable` write, and the workspace's `.deerflow/extensions_config.json` when
 * the workspace is trusted. A skill is disabled when either says `enabled: false`: a file may only
 * take a skill away, so a workspace cannot re-enable what the user turned off. A file that is not
 * valid JSON is reported (DeerFlow's text) and its entries are not used.
 *
 * Writes keep every other key (the MCP servers share the file), go through the one atomic write
 * (trust/atomicWrite.ts; DeerFlow's `atomic_write_extensions_config`), keep the file's mode, and
 * write through a link to where it leads.
 */
import { existsSync, readFileSync, realpathSync, statSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { HarnessError } from "../errors.js";
import { writeFileAtomic } from "../trust/atomicWrite.js";
import { userExtensionsConfig, workspaceExtensionsConfigFile } from "../trust/extensionsConfig.js";
import type { SkillDiagnostic } from "./types.js";

export interface EnabledState {
  /** Names some file disables. */
  readonly disabled: ReadonlySet<string>;
  readonly diagnostics: readonly SkillDiagnostic[];
}

export function extensionsConfigFiles(o: { dataDir: string; workspaceFolder?: string; workspaceTrusted: boolean; env?: NodeJS.ProcessEnv }): string[] {
  const files = [userExtensionsConfig(o.dataDir, o.env ?? process.env).file];
  if (o.workspaceFolder && o.workspaceTrusted) files.push(workspaceExtensionsConfigFile(o.workspaceFolder));
  return files;
}

type Json = Record<string, unknown>;
const isRecord = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

function readJson(file: string): { data?: Json; error?: string } {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return {};
    return { error: `Extensions config file at ${file} cannot be read: ${(err as Error).message}` };
  }
  try {
    const data: unknown = JSON.parse(text);
    return isRecord(data) ? { data } : { error: `Extensions config file at ${file} is not a JSON object` };
  } catch (err) {
    return { error: `Extensions config file at ${file} is not valid JSON: ${(err as Error).message}` };
  }
}

export function readEnabledState(files: readonly string[]): EnabledState {
  const disabled = new Set<string>();
  const diagnostics: SkillDiagnostic[] = [];
  for (const file of files) {
    const { data, error } = readJson(file);
    if (error) diagnostics.push({ level: "error", code: "extensions_config_invalid", message: `${error}; its skills entries are not used` });
    const skills = data?.skills;
    if (!isRecord(skills)) continue;
    for (const [name, entry] of Object.entries(skills)) if (isRecord(entry) && entry.enabled === false) disabled.add(name);
  }
  return { disabled, diagnostics };
}

/**
 * Set `skills.<name>.enabled` in the user's file (trust/extensionsConfig.ts, the file MCP reads
 * too); returns the file written.
 */
export function writeSkillEnabled(dataDir: string, name: string, enabled: boolean, env: NodeJS.ProcessEnv = process.env): string {
  const { file } = userExtensionsConfig(dataDir, env);
  setEntry(file, name, enabled);
  return file;
}

function setEntry(file: string, name: string, enabled: boolean): void {
  const { data, error } = readJson(file);
  if (error) throw new HarnessError("usage", `${error}; fix it before changing a skill's state, so nothing in it is lost.`);
  const config: Json = { ...(data ?? {}) };
  const skills: Json = isRecord(config.skills) ? { ...config.skills } : {};
  const current = skills[name];
  const entry: Json = isRecord(current) ? { ...current } : {};
  entry.enabled = enabled;
  skills[name] = entry;
  config.skills = skills;
  // The user's own file: written through a link to where it leads, and its mode kept (the
  // editor and DeerFlow read it as the user), 0o600 when it is new.
  const target = existsSync(file) ? realpathSync(file) : file;
  const mode = existsSync(target) ? statSync(target).mode & 0o777 : 0o600;
  mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
  writeFileAtomic(target, `${JSON.stringify(config, null, 2)}\n`, { mode });
}
