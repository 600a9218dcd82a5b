/**
 * Protected paths: places in the workspace where a file the agent writes would make code run on
 * the host without the user's yes. The agent's file tools (and every other writer the harness
 * runs on the model's behalf) classify a write here first; a protected one is refused with an
 * error that names the rule, so the model can tell the user what it wanted to change.
 *
 * `classifyWrite` is separate from the refusal on purpose: once approvals exist (issue 13) a
 * protected write becomes "ask the user" instead of "refuse", with the same classification.
 *
 * - Both the path as written and its real path (symlinks of the path and of every parent
 *   resolved, dangling links followed) are classified, so a symlink planted to `.git` is caught.
 * - Names are compared case-folded on every platform, not only on macOS/Windows: whether a volume
 *   is case-insensitive is a property of the volume (a Windows drive under WSL, an APFS or SMB
 *   mount seen from Linux), not of `process.platform`.
 * - The rules apply at any depth (`sub/.git/hooks` runs when the user runs git in `sub`), inside
 *   the thread's uploads and outputs too; `.deerflow` only at the workspace root, where the
 *   harness keeps its thread data.
 * - The same list (`ruleOfSegment`) decides what the dev container gets read-only
 *   (devcontainer/protectedMounts.ts) and what is watched after every command there
 *   (devcontainer/protectedWatch.ts): one list for the file tools and for the container. One
 *   rule is the file tools' only: `node_modules/.bin/**`, which every `npm install` in the
 *   container rewrites (a read-only mount there would break installs), and which matters to the
 *   host only through a name someone runs there (`npx pkg` prefers a local bin to the registry's).
 */
import { relative, resolve, sep } from "node:path";
import { HarnessError } from "../errors.js";
import type { ThreadDirs } from "../threads/threadDirs.js";
import { THREAD_DATA_DIR_NAME, isWithin, realPathAllowingMissing } from "../sandbox/paths.js";

export type ProtectedRuleId =
  | "devcontainer"
  | "git"
  | "husky"
  | "vscode"
  | "idea"
  | "pre_commit"
  | "lefthook"
  | "code_workspace"
  | "gitmodules"
  | "envrc"
  | "package_manager"
  | "node_bin"
  | "thread_data";

export interface ProtectedRule {
  readonly id: ProtectedRuleId;
  /** The paths the rule covers, as a person reads them. */
  readonly pattern: string;
  /** What would run on the host (or what would be corrupted) if the agent wrote there. */
  readonly reason: string;
}

export const PROTECTED_RULES: Readonly<Record<ProtectedRuleId, ProtectedRule>> = {
  devcontainer: {
    id: "devcontainer",
    pattern: ".devcontainer/**, .devcontainer.json",
    reason: "the dev container configuration, whose commands run on the host when the container is brought up",
  },
  git: { id: "git", pattern: ".git/**", reason: "git runs hooks and the commands in its config on the host" },
  husky: { id: "husky", pattern: ".husky/**", reason: "git hooks that run on the host" },
  vscode: { id: "vscode", pattern: ".vscode/**", reason: "VS Code runs its tasks and applies its settings on the host" },
  idea: { id: "idea", pattern: ".idea/**", reason: "JetBrains IDEs run the run configurations and tool settings kept here on the host" },
  pre_commit: { id: "pre_commit", pattern: ".pre-commit-config.yaml", reason: "pre-commit runs the hooks it lists on the host at the next commit" },
  lefthook: {
    id: "lefthook",
    pattern: "lefthook.yml, .lefthook.yml (and their -local, .yaml, .toml, .json forms)",
    reason: "lefthook runs the commands it lists as git hooks on the host",
  },
  code_workspace: { id: "code_workspace", pattern: "*.code-workspace", reason: "opening it in VS Code applies its settings and tasks on the host" },
  gitmodules: { id: "gitmodules", pattern: ".gitmodules", reason: "git clones and checks out the submodules it names on the host" },
  envrc: { id: "envrc", pattern: ".envrc", reason: "direnv runs it in the user's shell on the host when they enter the folder" },
  package_manager: {
    id: "package_manager",
    pattern: ".npmrc, .yarnrc, .yarnrc.yml, .pnpmfile.cjs, bunfig.toml, .bunfig.toml, pip.conf, pip.ini, uv.toml, poetry.toml, .pypirc",
    reason:
      "a package manager run in the folder reads it, and it can make the package manager run code on the host (node-options, yarnPath, a pnpmfile, a preload) or install from another registry",
  },
  node_bin: {
    id: "node_bin",
    pattern: "node_modules/.bin/**",
    reason: "npx and npm scripts run the programs there by name on the host, ahead of the package the user named",
  },
  thread_data: {
    id: "thread_data",
    pattern: `${THREAD_DATA_DIR_NAME}/** outside this thread's uploads and outputs`,
    reason: "the harness's own data and other threads' files",
  },
};

/** Folded segment name → rule, for the rules that apply at any depth. */
const SEGMENT_RULES = new Map<string, ProtectedRule>([
  [".devcontainer", PROTECTED_RULES.devcontainer],
  [".devcontainer.json", PROTECTED_RULES.devcontainer],
  [".git", PROTECTED_RULES.git],
  [".husky", PROTECTED_RULES.husky],
  [".vscode", PROTECTED_RULES.vscode],
  [".idea", PROTECTED_RULES.idea],
  [".pre-commit-config.yaml", PROTECTED_RULES.pre_commit],
  [".gitmodules", PROTECTED_RULES.gitmodules],
  [".envrc", PROTECTED_RULES.envrc],
  // Each read from the folder (or a parent of where the tool runs) by npm, yarn 1 and berry,
  // pnpm, bun, pip (a virtualenv's pip.conf), uv, poetry and twine.
  ...[".npmrc", ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", "bunfig.toml", ".bunfig.toml", "pip.conf", "pip.ini", "uv.toml", "poetry.toml", ".pypirc"].map(
    (name) => [name, PROTECTED_RULES.package_manager] as const,
  ),
]);

/** The listed names without a leading dot (`pip.conf`, `uv.toml`, …), for the fast path below. */
const UNDOTTED_NAMES = [...SEGMENT_RULES.keys()].filter((n) => !n.startsWith("."));

/** Every name lefthook reads its configuration from (its docs: the file and its local override). */
const LEFTHOOK_NAME = /^\.?lefthook(-local)?\.(ya?ml|toml|json|jsonc)$/;
const CODE_WORKSPACE_SUFFIX = ".code-workspace";
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * The rule one path segment falls under (at any depth), or undefined. `.deerflow` is not here: it
 * is protected only at the workspace root, which `classifyWrite` decides from the whole path.
 */
export function ruleOfSegment(segment: string): ProtectedRule | undefined {
  // Fast path for the common case (the container's watch asks for every name in the tree): a
  // printable-ASCII name that cannot fold onto any protected name. Only NFKC can turn other
  // characters into these (a fullwidth full stop into "."), so anything else takes the full fold.
  if (PRINTABLE_ASCII.test(segment) && segment[0] !== ".") {
    const lower = segment.toLowerCase();
    if (!lower.includes("lefthook") && !lower.includes(CODE_WORKSPACE_SUFFIX) && !UNDOTTED_NAMES.some((n) => lower.startsWith(n))) return undefined;
  }
  const folded = foldSegment(segment);
  const exact = SEGMENT_RULES.get(folded);
  if (exact) return exact;
  if (LEFTHOOK_NAME.test(folded)) return PROTECTED_RULES.lefthook;
  if (folded.endsWith(CODE_WORKSPACE_SUFFIX) && folded.length > CODE_WORKSPACE_SUFFIX.length) return PROTECTED_RULES.code_workspace;
  return undefined;
}

/**
 * A protected path that a command in the dev container created or changed although the
 * container's read-only mounts should have stopped it (devcontainer/protectedWatch.ts).
 */
export interface ProtectedChange {
  /** Workspace-relative, `/` separators. */
  readonly rel: string;
  readonly rule: ProtectedRuleId;
  readonly change: "created" | "changed";
}

export type WriteClass =
  | { readonly protected: false }
  | { readonly protected: true; readonly rule: ProtectedRule };

const NOT_PROTECTED: WriteClass = { protected: false };

/**
 * One path segment as a case-insensitive volume may see it: NFKC first (APFS and NTFS fold the
 * long s and the Kelvin sign onto `s` and `k`), then case; Windows also drops trailing dots and
 * spaces and reads `name:stream` as `name`.
 */
export function foldSegment(segment: string): string {
  return segment.normalize("NFKC").toUpperCase().toLowerCase().replace(/:.*$/s, "").replace(/[. ]+$/, "");
}

function bySegments(segments: readonly string[]): WriteClass {
  for (const [i, segment] of segments.entries()) {
    const rule = ruleOfSegment(segment);
    if (rule) return { protected: true, rule };
    // The file tools' own rule (the header says why the container's list does not have it).
    if (i + 1 < segments.length && foldSegment(segment) === "node_modules" && foldSegment(segments[i + 1] as string) === ".bin") {
      return { protected: true, rule: PROTECTED_RULES.node_bin };
    }
  }
  return NOT_PROTECTED;
}

function segmentsBelow(path: string, root: string): string[] {
  return relative(root, path).split(sep).filter((s) => s !== "");
}

/** One absolute, `..`-free host path; undefined when it lies outside every root (containment's job). */
function classifyOne(path: string, dirs: ThreadDirs): WriteClass | undefined {
  // Own uploads/outputs: exact containment (thread ids are case-sensitive: `T1` is another thread).
  for (const own of [dirs.uploads, dirs.outputs]) {
    if (isWithin(path, own)) return bySegments(segmentsBelow(path, own));
  }
  if (!isWithin(path, dirs.workspace)) return undefined;
  const rule = ruleWithinWorkspace(path, dirs.workspace);
  return rule ? { protected: true, rule } : NOT_PROTECTED;
}

/**
 * The rule a path inside `workspace` falls under, with no exception for a thread's own folders:
 * a protected segment at any depth, or `.deerflow` at the root. Undefined when none applies, or
 * outside the workspace. classifyWrite uses it below the thread's own uploads and outputs; the
 * skills discovery (skills/discover.ts) uses it for a folder it would copy into `/mnt/skills`,
 * which every thread reads, so there a thread's own folders are no exception either.
 */
export function ruleWithinWorkspace(path: string, workspace: string): ProtectedRule | undefined {
  if (!isWithin(path, workspace)) return undefined;
  const segments = segmentsBelow(path, workspace);
  if (segments.length > 0 && foldSegment(segments[0] as string) === THREAD_DATA_DIR_NAME) return PROTECTED_RULES.thread_data;
  const verdict = bySegments(segments);
  return verdict.protected ? verdict.rule : undefined;
}

/**
 * Would writing `hostPath` (a host path the mapping produced, not yet resolved) touch a protected
 * path? Classifies the path as written and where its symlinks lead.
 */
export function classifyWrite(hostPath: string, dirs: ThreadDirs): WriteClass {
  const lexical = resolve(hostPath);
  return classifyResolved(lexical, realPathAllowingMissing(lexical), dirs);
}

/** classifyWrite for a caller that resolved the path already (and goes on to use exactly `real`). */
export function classifyResolved(lexical: string, real: string, dirs: ThreadDirs): WriteClass {
  const first = classifyOne(lexical, dirs);
  if (first?.protected) return first;
  return classifyOne(real, dirs) ?? NOT_PROTECTED;
}

/** The refusal: a HarnessError("path_protected") that carries the rule (issue 13 asks instead). */
export class ProtectedPathError extends HarnessError {
  constructor(readonly rule: ProtectedRule) {
    super(
      "path_protected",
      `Protected path (${rule.pattern}): ${rule.reason}. The agent may not write here; ` +
        "tell the user what you wanted to change so they can do it themselves",
    );
    this.name = "ProtectedPathError";
  }
}

export function assertWritable(lexical: string, real: string, dirs: ThreadDirs): void {
  const verdict = classifyResolved(lexical, real, dirs);
  if (verdict.protected) throw new ProtectedPathError(verdict.rule);
}
