/**
 * The user's login-shell PATH, for stdio servers on the host (issue 23). The top complaint in
 * every agent extension's tracker is an MCP server that cannot find `npx` or `node` (cline#2204,
 * modelcontextprotocol/servers#64): an editor started from a dock or launcher has the session's
 * PATH, not the one the user's shell profile builds (nvm, Homebrew, volta, asdf). So, as VS
 * Code's `shellEnv` does, the login shell is asked once per process (`$SHELL -i -l -c`), bounded
 * by a timeout; its PATH comes first, then this process's, then the directory of the Node
 * running the harness, so `#!/usr/bin/env node` scripts still find a node.
 *
 * The shell starts in the home folder, not wherever the harness was started (often the
 * workspace): a profile that reacts to its folder (nvm's `.nvmrc` hook, `mise activate`) must not
 * let a workspace file choose the PATH every server gets. And what a server gets is that PATH
 * without the workspace (`serverPath`, issue 31 item 3).
 */
import { spawn } from "node:child_process";
import { realpathSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, delimiter, isAbsolute, resolve } from "node:path";
import { isWithin } from "../sandbox/paths.js";

const MARK = "__DEERFLOW_LOGIN_PATH__";
const TIMEOUT_MS = 10_000;

let cached: Promise<string> | undefined;

/** Merges PATH lists, first occurrence wins, empty entries dropped. */
export function mergePaths(...lists: Array<string | undefined>): string {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const list of lists) {
    for (const entry of (list ?? "").split(delimiter)) {
      if (entry === "" || seen.has(entry)) continue;
      seen.add(entry);
      out.push(entry);
    }
  }
  return out.join(delimiter);
}

/**
 * PATH without what the workspace could steer: a relative entry (`.`, `node_modules/.bin`, `~/bin`
 * as written) is looked up from the server's working folder, and an entry inside the workspace
 * (direnv's `PATH_add bin`, the `node_modules/.bin` npm puts first when `deerflow` runs from an npm
 * script) is a folder the agent can write: either would let a planted `npx` or `node` run in
 * place of the user's. Both are dropped, wherever they stood; a link is judged by where it leads.
 */
export function withoutWorkspaceEntries(path: string, workspaceFolder: string): string {
  const folders = [resolve(workspaceFolder), realOr(workspaceFolder)];
  const inside = (p: string) => folders.some((f) => isWithin(p, f));
  return path
    .split(delimiter)
    .filter((entry) => entry !== "" && isAbsolute(entry) && !inside(resolve(entry)) && !inside(realOr(entry)))
    .join(delimiter);
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}

/** The PATH a stdio server on the host gets (cached for the process; `withoutWorkspaceEntries` per folder). */
export function hostServerPath(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  cached ??= loginShellPath(env).then((login) => mergePaths(login, env.PATH, dirname(process.execPath)));
  return cached;
}

/** The login shell's PATH, or undefined when there is no usable shell (Windows, a broken profile, a timeout). */
export function loginShellPath(env: NodeJS.ProcessEnv = process.env, timeoutMs = TIMEOUT_MS): Promise<string | undefined> {
  const shell = env.SHELL;
  if (process.platform === "win32" || !shell) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    let out = "";
    let settled = false;
    const done = (value: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(value);
    };
    let child;
    try {
      // Interactive and login: the files where users set PATH (.bashrc, .zshrc, .profile, …).
      child = spawn(shell, ["-i", "-l", "-c", `printf '\\n${MARK}%s${MARK}\\n' "$PATH"`], {
        env: { ...env, DEERFLOW_RESOLVING_SHELL_ENV: "1" },
        cwd: env.HOME ?? homedir(),
        stdio: ["ignore", "pipe", "ignore"],
        detached: true,
      });
    } catch {
      done(undefined);
      return;
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
      done(undefined);
    }, timeoutMs);
    timer.unref();
    child.stdout.on("data", (c: Buffer) => {
      out += c.toString("utf8");
      const m = new RegExp(`${MARK}(.*?)${MARK}`, "s").exec(out);
      if (m) done(m[1]);
    });
    child.once("error", () => done(undefined));
    child.once("close", () => done(undefined));
  });
}
