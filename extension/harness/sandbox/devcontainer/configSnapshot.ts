/**
 * What `devcontainer up` will execute for a folder, read once: devcontainer.json (either
 * location), the Dockerfile and compose files it names (plus the compose project's `.env`, which
 * compose interpolates), its local features (folders named by a relative path in "features"),
 * and the workspace scripts its host command (`initializeCommand`) names. The bytes read here
 * are hashed into the fingerprint the user approves AND are what the approved copy is written
 * from (approvedCopy.ts), so an edit after this read cannot reach `up` unnoticed.
 *
 * Every file must be a regular file inside the workspace: a symlink or a path out of the folder
 * would let an agent-written config pull a host file (a key, /etc/shadow) into the copy, the
 * image or an error message. Sizes are capped for the same reason a walk is bounded elsewhere.
 *
 * Not covered, and said so in the threat model: what a Dockerfile COPYs from its build context
 * and what compose files reference themselves (env_file, further Dockerfiles). Those run inside
 * the build or the container, not on the host; the host-side settings (mounts, runArgs, the
 * build context itself) are in devcontainer.json and listed for the user in `notes`.
 */
import { createHash } from "node:crypto";
import { lstatSync, readdirSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";
import { HarnessError } from "../../errors.js";
import { splitShellTokens } from "../commandValidation.js";
import { readFileCheckedSync } from "../../trust/openChecked.js";
import { devContainerConfigPath } from "./detect.js";
import { parseJsonc } from "./jsonc.js";

export type SnapshotRole = "config" | "dockerfile" | "compose" | "compose-env" | "feature" | "host-script";

export interface SnapshotFile {
  readonly role: SnapshotRole;
  /** Workspace-relative, with `/` separators: the name the user sees and the fingerprint hashes. */
  readonly rel: string;
  readonly abs: string;
  readonly bytes: Buffer;
}

export interface ConfigSnapshot {
  /** realpath of the folder. */
  readonly workspaceFolder: string;
  /** The devcontainer.json `up` would read (absolute). */
  readonly configPath: string;
  readonly config: Readonly<Record<string, unknown>>;
  /** The config first, then the rest by name. */
  readonly files: readonly SnapshotFile[];
  /** sha256 (hex) over every file's role, name and bytes. */
  readonly fingerprint: string;
  /** `initializeCommand`, as the user should read it: it runs on this machine. */
  readonly hostCommands: readonly string[];
  /** Host environment variables the config reads (`${localEnv:NAME}`). */
  readonly localEnv: readonly string[];
  /** Host-facing settings worth a look (mounts, runArgs, privileged, features, an outside build context). */
  readonly notes: readonly string[];
}

const MAX_FILE_BYTES = 1024 * 1024;
const MAX_FEATURE_FILES = 500;
const MAX_TOTAL_BYTES = 16 * 1024 * 1024;
const FINGERPRINT_VERSION = "deerflow-devcontainer-fingerprint/1";

/** Reads the folder's configuration; `sandbox_bringup_failed` when there is none or it is unusable. */
export function readConfigSnapshot(workspaceFolder: string): ConfigSnapshot {
  const folder = realpathSync(workspaceFolder);
  const configPath = devContainerConfigPath(folder);
  if (!configPath) throw invalid(folder, "it has no .devcontainer/devcontainer.json or .devcontainer.json");
  const reader = new FileReader(folder);
  const configFile = reader.read("config", configPath);
  let config: Record<string, unknown>;
  try {
    const parsed = parseJsonc(configFile.bytes.toString("utf8"));
    if (!parsed || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("it is not a JSON object");
    config = parsed as Record<string, unknown>;
  } catch (err) {
    throw invalid(folder, `${configFile.rel} cannot be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  const configDir = dirname(configPath);
  const pathOf = (value: string): string => resolve(configDir, substituteLocalFolder(value, folder));

  const build = (config.build ?? {}) as Record<string, unknown>;
  const dockerfile = stringOr(build.dockerfile) ?? stringOr(config.dockerFile);
  if (dockerfile !== undefined) reader.read("dockerfile", pathOf(dockerfile));
  const compose = config.dockerComposeFile;
  const composeFiles = typeof compose === "string" ? [compose] : Array.isArray(compose) ? compose.filter((c): c is string => typeof c === "string") : [];
  for (const file of composeFiles) reader.read("compose", pathOf(file));
  const firstCompose = composeFiles[0];
  if (firstCompose !== undefined) reader.readIfPresent("compose-env", join(dirname(pathOf(firstCompose)), ".env"));
  for (const id of Object.keys(featuresOf(config))) {
    if (id.startsWith("./") || id.startsWith("../")) reader.readTree("feature", resolve(configDir, id));
  }
  const hostCommands = commandTexts(config.initializeCommand);
  for (const path of scriptsNamedBy(config.initializeCommand, folder)) reader.read("host-script", path);

  const files = [configFile, ...reader.files.filter((f) => f !== configFile).sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))];
  return {
    workspaceFolder: folder,
    configPath,
    config,
    files,
    fingerprint: fingerprintOf(files),
    hostCommands,
    localEnv: [...new Set([...configFile.bytes.toString("utf8").matchAll(/\$\{localEnv:([^}:]+)/g)].map((m) => m[1] as string))].sort(),
    notes: notesOf(config, folder, configDir),
  };
}

export function fingerprintOf(files: readonly SnapshotFile[]): string {
  const hash = createHash("sha256").update(`${FINGERPRINT_VERSION}\n`);
  for (const f of [...files].sort((a, b) => (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0))) {
    hash.update(`${f.role}\0${f.rel}\0${f.bytes.length}\0`).update(f.bytes);
  }
  return hash.digest("hex");
}

function invalid(folder: string, why: string): HarnessError {
  return new HarnessError("sandbox_bringup_failed", `The dev container configuration of ${folder} cannot be used: ${why}.`);
}

/** Reads files once each, inside the folder, regular files only, within the size caps. */
class FileReader {
  readonly files: SnapshotFile[] = [];
  private total = 0;
  constructor(private readonly folder: string) {}

  read(role: SnapshotRole, path: string): SnapshotFile {
    const abs = resolve(path);
    const known = this.files.find((f) => f.abs === abs);
    if (known) return known;
    const rel = this.relativeInside(abs);
    let stat;
    try {
      stat = lstatSync(abs);
    } catch {
      throw invalid(this.folder, `${rel} does not exist`);
    }
    if (stat.isSymbolicLink()) throw invalid(this.folder, `${rel} is a symbolic link; DeerFlow reads only regular files for a dev container (replace the link with the file)`);
    if (!stat.isFile()) throw invalid(this.folder, `${rel} is not a file`);
    // lstat sees only the last component: a linked folder on the way (.devcontainer -> /etc)
    // would still lead out of the workspace.
    if (realpathSync(abs) !== abs) throw invalid(this.folder, `${rel} is reached through a symbolic link to a folder; DeerFlow follows no links for a dev container`);
    if (stat.size > MAX_FILE_BYTES) throw invalid(this.folder, `${rel} is larger than ${MAX_FILE_BYTES / 1024} KiB`);
    this.total += stat.size;
    if (this.total > MAX_TOTAL_BYTES) throw invalid(this.folder, `its files add up to more than ${MAX_TOTAL_BYTES / (1024 * 1024)} MiB`);
    // The checks above look at a path the container can swap at any moment (for a link, or a
    // FIFO that would hang a plain read): the checked open confirms the file it got is this one.
    let bytes: Buffer;
    try {
      bytes = readFileCheckedSync(abs, MAX_FILE_BYTES);
    } catch (err) {
      throw invalid(this.folder, `${rel} changed while it was read (${err instanceof Error ? err.message : String(err)})`);
    }
    const file: SnapshotFile = { role, rel, abs, bytes };
    this.files.push(file);
    return file;
  }

  readIfPresent(role: SnapshotRole, path: string): void {
    try {
      lstatSync(path);
    } catch {
      return;
    }
    this.read(role, path);
  }

  /** Every regular file under a local feature's folder; symlinks are refused, not followed. */
  readTree(role: SnapshotRole, dir: string): void {
    const rel = this.relativeInside(resolve(dir));
    let stat;
    try {
      stat = lstatSync(dir);
    } catch {
      throw invalid(this.folder, `the local feature ${rel} does not exist`);
    }
    if (!stat.isDirectory()) throw invalid(this.folder, `the local feature ${rel} is not a folder`);
    const pending = [dir];
    let count = 0;
    while (pending.length > 0) {
      const current = pending.pop() as string;
      for (const entry of readdirSync(current, { withFileTypes: true })) {
        const path = join(current, entry.name);
        if (entry.isDirectory()) pending.push(path);
        else {
          if (++count > MAX_FEATURE_FILES) throw invalid(this.folder, `the local feature ${rel} has more than ${MAX_FEATURE_FILES} files`);
          this.read(role, path);
        }
      }
    }
  }

  private relativeInside(abs: string): string {
    const rel = relative(this.folder, abs);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) {
      throw invalid(this.folder, `it refers to ${abs}, which is outside the workspace folder`);
    }
    return rel.split(sep).join("/");
  }
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

function featuresOf(config: Record<string, unknown>): Record<string, unknown> {
  const f = config.features;
  return f && typeof f === "object" && !Array.isArray(f) ? (f as Record<string, unknown>) : {};
}

/** The two variables a path field can use that DeerFlow resolves before `up` does. */
function substituteLocalFolder(value: string, folder: string): string {
  return value.replaceAll("${localWorkspaceFolderBasename}", basename(folder)).replaceAll("${localWorkspaceFolder}", folder);
}

/** A lifecycle command's forms: a string (shell), an array (argv), an object of named commands. */
export function commandTexts(value: unknown): string[] {
  if (typeof value === "string") return value.trim() === "" ? [] : [value];
  if (Array.isArray(value)) return value.length === 0 ? [] : [value.map((v) => JSON.stringify(String(v))).join(" ")];
  if (value && typeof value === "object") {
    return Object.entries(value as Record<string, unknown>).flatMap(([name, v]) => commandTexts(v).map((text) => `${name}: ${text}`));
  }
  return [];
}

/**
 * Workspace files a host command names (`bash .devcontainer/init.sh`, `./setup.sh`,
 * `${localWorkspaceFolder}/init`): they run on the host, so their bytes are part of what is
 * approved. Any word naming an existing file inside the folder counts; anything else is an
 * ordinary word. What a host command reads implicitly (a Makefile for `make`, package.json for
 * `npm`) cannot be seen from its words: the approval shows the command for the user to judge.
 */
function scriptsNamedBy(value: unknown, folder: string): string[] {
  const wordsOf = (v: unknown): string[] => (typeof v === "string" ? splitShellTokens(v) : Array.isArray(v) ? v.map(String) : []);
  const top = value && typeof value === "object" && !Array.isArray(value) ? Object.values(value as Record<string, unknown>).flatMap(wordsOf) : wordsOf(value);
  // `sh -c 'bash ./init.sh'`: a quoted script's own words count too.
  const words = top.flatMap((w) => (/\s/.test(w) ? [w, ...splitShellTokens(w)] : [w]));
  const found = new Set<string>();
  for (const raw of words) {
    // The CLI substitutes these in initializeCommand before the host runs it.
    const word = substituteLocalFolder(raw, folder);
    if (word.startsWith("-")) continue;
    const path = resolve(folder, word);
    const rel = relative(folder, path);
    if (rel === "" || rel.startsWith("..") || isAbsolute(rel)) continue;
    try {
      // A symlink is kept so that the reader refuses it by name instead of it passing unseen.
      const stat = lstatSync(path);
      if (stat.isFile() || stat.isSymbolicLink()) found.add(path);
    } catch {
      // Not a file: a plain argument.
    }
  }
  return [...found];
}

function notesOf(config: Record<string, unknown>, folder: string, configDir: string): string[] {
  const notes: string[] = [];
  const show = (v: unknown): string => (typeof v === "string" ? v : JSON.stringify(v));
  for (const key of ["runArgs", "mounts", "workspaceMount", "privileged", "capAdd", "securityOpt", "dockerComposeFile", "runServices"] as const) {
    if (config[key] !== undefined && !(Array.isArray(config[key]) && config[key].length === 0)) notes.push(`${key}: ${show(config[key])}`);
  }
  const features = Object.keys(featuresOf(config));
  if (features.length > 0) notes.push(`features: ${features.join(", ")}`);
  const build = (config.build ?? {}) as Record<string, unknown>;
  const context = stringOr(build.context) ?? stringOr(config.context);
  if (context !== undefined && !context.includes("${")) {
    const abs = resolve(configDir, context);
    const rel = relative(folder, abs);
    if (rel.startsWith("..") || isAbsolute(rel)) notes.push(`build context outside the workspace: ${abs}`);
  }
  for (const key of ["onCreateCommand", "updateContentCommand", "postCreateCommand", "postStartCommand", "postAttachCommand"]) {
    for (const text of commandTexts(config[key])) notes.push(`${key} (in the container): ${text}`);
  }
  return notes;
}
