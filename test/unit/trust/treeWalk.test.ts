// The tree walk every search and the delivery scan use: os.walk's order, linked folders reported
// but never entered (loops end), deep trees fine, the event loop gets turns inside one huge folder,
// and an aborted signal stops the walk with its reason. Real folders and real symlinks.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { walkTree, type TreeEntry } from "../../../extension/harness/trust/treeWalk.js";

const root = realpathSync(mkdtempSync(join(tmpdir(), "deerflow-walk-")));
after(() => rmSync(root, { recursive: true, force: true }));

function folder(name: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  return dir;
}

async function collect(dir: string, options: Parameters<typeof walkTree>[2] = {}): Promise<TreeEntry[]> {
  const seen: TreeEntry[] = [];
  await walkTree(dir, (e) => (seen.push(e), true), options);
  return seen;
}

test("top-down like os.walk: per folder its subfolders then its files, sorted; ignore and maxDepth", async () => {
  const dir = folder("order");
  mkdirSync(join(dir, "b", "deep"), { recursive: true });
  mkdirSync(join(dir, "a"));
  mkdirSync(join(dir, "skip"));
  writeFileSync(join(dir, "z.txt"), "");
  writeFileSync(join(dir, "a", "y.txt"), "");
  writeFileSync(join(dir, "b", "deep", "x.txt"), "");
  writeFileSync(join(dir, "skip", "hidden.txt"), "");
  const all = await collect(dir, { ignore: (name) => name === "skip" });
  assert.deepEqual(all.map((e) => e.rel), ["a", "b", "z.txt", "a/y.txt", "b/deep", "b/deep/x.txt"]);
  assert.deepEqual(all.map((e) => [e.isDir, e.isFile]), [[true, false], [true, false], [false, true], [false, true], [true, false], [false, true]]);
  const shallow = await collect(dir, { maxDepth: 1, ignore: (name) => name === "skip" });
  assert.deepEqual(shallow.map((e) => e.rel), ["a", "b", "z.txt"]);
});

test("symlink loops and links out of the tree are reported, never entered", async () => {
  const dir = folder("loops");
  const outside = folder("loops-outside");
  writeFileSync(join(outside, "secret.txt"), "");
  mkdirSync(join(dir, "a"));
  symlinkSync(dir, join(dir, "a", "back-to-root"));
  symlinkSync("..", join(dir, "a", "parent"));
  symlinkSync(join(dir, "a", "self"), join(dir, "a", "self")); // a link to itself
  symlinkSync(outside, join(dir, "out"));
  writeFileSync(join(dir, "a", "file.txt"), "");
  const all = await collect(dir);
  assert.deepEqual(all.map((e) => e.rel), ["a", "out", "a/back-to-root", "a/parent", "a/file.txt", "a/self"]);
  const links = all.filter((e) => e.isSymlink);
  assert.deepEqual(links.map((e) => [e.rel, e.isDir, e.isFile]), [["out", true, false], ["a/back-to-root", true, false], ["a/parent", true, false], ["a/self", false, false]]);
  assert.ok(!all.some((e) => e.rel.endsWith("secret.txt")));
});

test("a tree deeper than any recursion budget is walked to the bottom", async () => {
  const dir = folder("deep");
  let current = dir;
  const depth = 400;
  for (let i = 0; i < depth; i += 1) {
    current = join(current, "d");
    mkdirSync(current);
  }
  writeFileSync(join(current, "bottom.txt"), "");
  const all = await collect(dir);
  assert.equal(all.length, depth + 1);
  assert.equal(all.at(-1)!.rel, `${"d/".repeat(depth)}bottom.txt`);
});

test("inside one huge folder the event loop gets turns (timers, the lease heartbeat, Cancel)", async () => {
  const dir = folder("wide");
  for (let i = 0; i < 1200; i += 1) writeFileSync(join(dir, `f${String(i).padStart(4, "0")}`), "");
  let ticked = false;
  let tickedBeforeEnd = false;
  let visited = 0;
  await walkTree(dir, () => {
    visited += 1;
    // Scheduled once the folder is listed: from here on only the walk's own yields let it run.
    if (visited === 1) setImmediate(() => (ticked = true));
    if (visited === 1200) tickedBeforeEnd = ticked;
    return true;
  });
  assert.equal(visited, 1200);
  assert.ok(tickedBeforeEnd, "the walk yielded to the event loop while visiting one folder");
});

test("an aborted signal stops the walk with its reason, before the next entry", async () => {
  const dir = folder("abort");
  for (let i = 0; i < 50; i += 1) mkdirSync(join(dir, `d${i}`));
  const controller = new AbortController();
  const reason = new Error("Cancelled.");
  let visited = 0;
  await assert.rejects(
    walkTree(dir, () => {
      visited += 1;
      if (visited === 3) controller.abort(reason);
      return true;
    }, { signal: controller.signal }),
    (err) => err === reason,
  );
  assert.equal(visited, 3);
  await assert.rejects(walkTree(dir, () => true, { signal: AbortSignal.abort(reason) }), (err) => err === reason);
});
