/**
 * Shadow checkpoints of a workspace folder (issue 35, items 1 and 3): the folder's state in a git
 * repository of our own under the data dir, `<dataDir>/shadow/<folder-hash>`, written through the
 * `git` binary with GIT_DIR, GIT_WORK_TREE and GIT_INDEX_FILE all pointing there. The user's
 * `.git`, index, stash and refs are never opened: git is never started without GIT_DIR, and
 * git itself never descends into a `.git` folder of the work tree. (Cline and Roo keep the same
 * kind of shadow repository; tracker.ts records what the file tools wrote, this records the tree.)
 *
 * What a checkpoint holds: every file git would add under the folder, honouring the folder's
 * `.gitignore` files; never `.deerflow/` (the thread folders) nor `.git`; never a file larger than
 * `maxFileBytes` (default 10 MB), which is listed in the result's `skipped` so the caller can say so.
 * Incremental by construction: git's index keeps each file's stat data, so a checkpoint of an
 * unchanged file costs a stat, and one changed file costs one hash (test/bench/shadowCheckpoint).
 *
 * The workspace is untrusted (trust/README.md, the threat model): a `.gitattributes` may name filter drivers or
 * a textconv, and a planted config could name hooks or an fsmonitor command. None of them runs:
 * git reads no system or global configuration here (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL), the
 * shadow repository's own config is ours, and hooks and fsmonitor are switched off per command.
 *
 * Not wired yet: the run worker does not call it, and `deerflow changes/revert/restore` do not
 * read it (the report of branch `undo` says what remains).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, realpathSync, statSync, writeFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { HarnessError } from "../errors.js";

export const DEFAULT_MAX_CHECKPOINT_FILE_BYTES = 10 * 1024 * 1024;
const REF = "refs/heads/checkpoints";

export interface CheckpointResult {
  /** The checkpoint's commit id. */
  commit: string;
  /** False when the tree is the previous checkpoint's: no new checkpoint was made. */
  changed: boolean;
  /** Paths (relative, `/`-separated) left out because they are larger than the limit. */
  skipped: string[];
}

export type ShadowChange = { path: string; status: "added" | "modified" | "deleted" };

interface GitResult {
  stdout: string;
  code: number;
  stderr: string;
}

export class ShadowRepo {
  private constructor(
    readonly folder: string,
    readonly gitDir: string,
    private readonly maxFileBytes: number,
  ) {}

  /** The shadow repository of `folder` (created on first use); `git` must be on PATH. */
  static async open(dataDir: string, folder: string, opts: { maxFileBytes?: number } = {}): Promise<ShadowRepo> {
    const real = realpathSync(folder);
    const hash = createHash("sha256").update(real).digest("hex").slice(0, 16);
    const gitDir = join(dataDir, "shadow", hash);
    const repo = new ShadowRepo(real, gitDir, opts.maxFileBytes ?? DEFAULT_MAX_CHECKPOINT_FILE_BYTES);
    const version = await repo.git(["--version"]).catch(() => undefined);
    if (!version || version.code !== 0) {
      throw new HarnessError("sandbox_runtime", "Checkpoints need the git program, which was not found on PATH. Install git, then start the run again.");
    }
    if (!existsSync(join(gitDir, "HEAD"))) {
      mkdirSync(gitDir, { recursive: true });
      await repo.must(["init", "--quiet"]);
      await repo.must(["config", "core.autocrlf", "false"]);
      await repo.must(["config", "core.quotePath", "false"]);
      // The untracked-files cache lets an unchanged folder be skipped by its mtime: the walk for
      // new files is what a 10k-file checkpoint spends most on.
      await repo.must(["config", "core.untrackedCache", "true"]);
    }
    mkdirSync(join(gitDir, "info"), { recursive: true });
    writeFileSync(join(gitDir, "info", "exclude"), "/.deerflow/\n.git\n");
    return repo;
  }

  private git(args: string[], input?: string): Promise<GitResult> {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: this.gitDir,
      GIT_DIR: this.gitDir,
      GIT_WORK_TREE: this.folder,
      GIT_INDEX_FILE: join(this.gitDir, "index"),
      GIT_CONFIG_NOSYSTEM: "1",
      GIT_CONFIG_GLOBAL: "/dev/null",
      GIT_AUTHOR_NAME: "DeerFlow",
      GIT_AUTHOR_EMAIL: "checkpoints@deerflow.invalid",
      GIT_COMMITTER_NAME: "DeerFlow",
      GIT_COMMITTER_EMAIL: "checkpoints@deerflow.invalid",
      GIT_TERMINAL_PROMPT: "0",
      LC_ALL: "C",
    };
    const safe = ["-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false", "-c", "gc.auto=0"];
    return new Promise((resolve, reject) => {
      const child = execFile("git", [...safe, ...args], { cwd: this.folder, env, maxBuffer: 256 * 1024 * 1024, encoding: "utf8" }, (err, stdout, stderr) => {
        // A string code is a spawn failure (ENOENT: no git); a number is git's own exit status.
        // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- execFile hands an Error
        if (err && typeof (err as NodeJS.ErrnoException).code === "string") return reject(err);
        resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 });
      });
      if (input !== undefined) child.stdin?.end(input);
    });
  }

  private async must(args: string[], input?: string): Promise<string> {
    const r = await this.git(args, input);
    if (r.code !== 0) throw new HarnessError("storage", `Checkpoint storage failed (git ${args[0]}): ${r.stderr.trim().split("\n")[0] ?? ""}. The folder itself was not changed.`);
    return r.stdout;
  }

  /** The latest checkpoint, or undefined before the first. */
  async head(): Promise<string | undefined> {
    const r = await this.git(["rev-parse", "--verify", "--quiet", REF]);
    return r.code === 0 ? r.stdout.trim() : undefined;
  }

  /** Record the folder's state; the previous checkpoint again when nothing changed. */
  async checkpoint(message: string): Promise<CheckpointResult> {
    // Changed and new files (tracked ones unchanged since the last checkpoint cost nothing).
    const listed = await this.must(["ls-files", "-z", "--others", "--modified", "--exclude-standard"]);
    const skipped: string[] = [];
    for (const rel of new Set(listed.split("\0").filter(Boolean))) {
      try {
        const st = statSync(join(this.folder, rel));
        if (st.isFile() && st.size > this.maxFileBytes) skipped.push(rel);
      } catch {
        // Gone since the listing (a deletion): `add -A` records it.
      }
    }
    const excluded = skipped.map((p) => `:(exclude,literal)${p}`);
    await this.must(["add", "-A", "--ignore-errors", "--", ".", ...excluded]);
    const tree = (await this.must(["write-tree"])).trim();
    const heads = await this.git(["rev-parse", "--quiet", REF, `${REF}^{tree}`]);
    const [parent, parentTree] = heads.code === 0 ? heads.stdout.trim().split("\n") : [];
    if (parent && parentTree === tree) return { commit: parent, changed: false, skipped };
    const commit = (await this.must(["commit-tree", tree, ...(parent ? ["-p", parent] : []), "-m", message || "checkpoint"])).trim();
    await this.must(["update-ref", REF, commit]);
    return { commit, changed: true, skipped };
  }

  /** What changed between two checkpoints, by path. */
  async diff(from: string, to: string): Promise<ShadowChange[]> {
    const out = await this.must(["diff-tree", "-r", "-z", "--no-renames", "--name-status", from, to]);
    const parts = out.split("\0").filter(Boolean);
    const changes: ShadowChange[] = [];
    for (let i = 0; i + 1 < parts.length; i += 2) {
      const s = parts[i]!;
      changes.push({ path: parts[i + 1]!, status: s === "A" ? "added" : s === "D" ? "deleted" : "modified" });
    }
    return changes;
  }

  /**
   * Put `paths` back as checkpoint `commit` had them: a file it lacked is removed, one it had is
   * written with its bytes. git writes the work tree itself and refuses to write beyond a symbolic
   * link, so a link planted in the folder cannot redirect a restore outside it.
   */
  async restore(commit: string, paths: readonly string[]): Promise<void> {
    if (paths.length === 0) return;
    await this.must(["restore", `--source=${commit}`, "--staged", "--worktree", "--no-overlay", "--", ...paths.map((p) => `:(literal)${p}`)]);
  }
}
