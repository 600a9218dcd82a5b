/**
 * A thread's files as this window opens them (artifacts, images, the outputs folder). With the
 * local harness, or a remote one that shares the folder, that is the file itself (panel/paths.ts).
 * With a remote harness whose workspace this window cannot reach, the file's bytes come over
 * `files/read` into the extension's global storage, one cache folder per server and thread:
 * `<globalStorage>/remote/<server key>/<thread id>/<outputs|uploads|workspace>/…`, written
 * read-only (a copy: an edit would change nothing on the server). The virtual path is checked as
 * the local mapping checks it (no traversal), and the server checks it again (`path_denied`).
 */
import { chmod, mkdir, rename, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { HarnessClient } from "../harnessClient.js";
import { existingHostPathOf, hostPathOf, isInside, outputsDirOf } from "../panel/paths.js";
import { serverKey } from "./target.js";

const OUTPUTS = "/mnt/user-data/outputs";

export interface ThreadFile {
  path: string;
  /** A copy downloaded from a remote harness (not the file itself). */
  downloaded: boolean;
}

export class ThreadFiles {
  constructor(
    private readonly harness: HarnessClient,
    private readonly storageRoot: string,
  ) {}

  /** Whether `folder`'s files are reached by download (a remote harness that does not share it). */
  downloads(folder: string): boolean {
    const remote = this.harness.remote;
    return remote !== undefined && remote.map.of(folder)?.shared !== true;
  }

  /** The file to open for `virtualPath` in `threadId`; undefined when it maps nowhere safe or does not exist. */
  async resolve(folder: string, threadId: string, virtualPath: string): Promise<ThreadFile | undefined> {
    if (!this.downloads(folder)) {
      const path = await existingHostPathOf(folder, threadId, virtualPath);
      return path === undefined ? undefined : { path, downloaded: false };
    }
    return { path: await this.download(folder, threadId, virtualPath), downloaded: true };
  }

  /** The thread's outputs folder: the real one, or the cache with every output artifact downloaded into it. */
  async outputs(folder: string, threadId: string): Promise<{ dir: string; files: string[] } | undefined> {
    if (!this.downloads(folder)) {
      const dir = outputsDirOf(folder, threadId);
      return dir === undefined ? undefined : { dir, files: [] };
    }
    const state = await this.harness.request("threads/state", { workspaceFolder: folder, threadId });
    const wanted = state.artifacts.filter((a) => a.exists && a.path.startsWith(`${OUTPUTS}/`));
    const files: string[] = [];
    for (const a of wanted) files.push(await this.download(folder, threadId, a.path));
    const dir = this.cachePath(threadId, OUTPUTS);
    if (dir === undefined) return undefined;
    await mkdir(dir, { recursive: true });
    return { dir, files };
  }

  private cachePath(threadId: string, virtualPath: string): string | undefined {
    const remote = this.harness.remote;
    if (!remote) return undefined;
    const base = join(this.storageRoot, "remote", serverKey(remote.url), threadId);
    // hostPathOf's checks (thread id, prefix, area, no traversal); then the same segments under the cache.
    if (hostPathOf(base, threadId, virtualPath) === undefined) return undefined;
    const target = join(base, ...virtualPath.slice("/mnt/user-data/".length).split("/").filter((s) => s !== "" && s !== "."));
    return isInside(base, target) ? target : undefined;
  }

  private async download(folder: string, threadId: string, virtualPath: string): Promise<string> {
    const target = this.cachePath(threadId, virtualPath);
    if (target === undefined) throw new Error(`${virtualPath} is not a file of this thread.`);
    const { base64 } = await this.harness.request("files/read", { workspaceFolder: folder, threadId, path: virtualPath });
    await mkdir(dirname(target), { recursive: true });
    // Written aside and renamed over: a copy being opened is never half-written, and the old
    // read-only copy is replaced without having to be made writable first.
    const partial = `${target}.${process.pid}.partial`;
    await writeFile(partial, Buffer.from(base64, "base64"), { mode: 0o444 });
    await chmod(partial, 0o444);
    await rename(partial, target);
    return target;
  }
}
