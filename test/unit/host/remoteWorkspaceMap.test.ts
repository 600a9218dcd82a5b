// A remote harness names its own folders: each local folder maps to a served workspace by real
// path (shared) or by name (downloads), and every folder and host path crosses through one map.
import { test } from "node:test";
import assert from "node:assert/strict";
import { WorkspaceMap, WorkspaceUnservedError, type LocalFolder } from "../../../extension/host/remote/workspaceMap.js";
import { RemoteAttachmentError, toLocalNotification, toLocalResult, toServerParams } from "../../../extension/host/remote/rewrite.js";
import { uploadAttachments } from "../../../extension/host/remote/attachments.js";
import type { RequestParams, ThreadStateView } from "../../../extension/protocol/rpc.js";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const local = (path: string, realPath = path): LocalFolder => ({ path, realPath, name: path.split("/").pop()! });

test("the same real path wins (shared); else the served workspace named like the folder (not shared); else none", () => {
  const map = new WorkspaceMap(
    [local("/home/me/app", "/mnt/share/app"), local("/home/me/site"), local("/home/me/notes")],
    [
      { name: "site", folder: "/srv/site" },
      { name: "app", folder: "/srv/other/app" },
      { name: "shared-app", folder: "/mnt/share/app" },
    ],
    "http://box:2024",
  );
  assert.deepEqual(map.of("/home/me/app"), { local: "/home/me/app", server: "/mnt/share/app", name: "shared-app", shared: true });
  assert.deepEqual(map.of("/home/me/site"), { local: "/home/me/site", server: "/srv/site", name: "site", shared: false });
  assert.equal(map.of("/home/me/notes"), undefined);
  assert.equal(map.toServer("/home/me/site"), "/srv/site");
  assert.equal(map.toLocal("/mnt/share/app"), "/home/me/app");
  assert.equal(map.toLocal("/srv/other/app"), undefined);
  assert.throws(() => map.toServer("/home/me/notes"), (err: unknown) => {
    assert.ok(err instanceof WorkspaceUnservedError);
    assert.equal(err.code, "workspace_unserved");
    // Says which workspaces the server has, so the user can open one of them.
    assert.match(err.message, /http:\/\/box:2024 serves no workspace for the folder "notes"/);
    assert.match(err.message, /site \(\/srv\/site\), app \(\/srv\/other\/app\), shared-app \(\/mnt\/share\/app\)/);
    return true;
  });
});

test("a server folder that resolves here to the local folder's real path is shared, and a name match never takes a workspace another folder reaches by path", () => {
  const map = new WorkspaceMap(
    [local("/work/app"), local("/home/me/app", "/data/app")],
    [
      { name: "app", folder: "/work/app" },
      { name: "app2", folder: "/link/app", realPath: "/data/app" },
    ],
    "srv",
  );
  assert.equal(map.of("/work/app")?.shared, true);
  assert.deepEqual(map.of("/home/me/app"), { local: "/home/me/app", server: "/link/app", name: "app2", shared: true });
});

test("host paths come back as local paths for a shared folder and as nothing for a downloaded one", () => {
  const map = new WorkspaceMap([local("/l/app"), local("/l/site")], [{ name: "app", folder: "/l/app" }, { name: "site", folder: "/srv/site" }], "srv");
  assert.equal(map.localPath("/l/app/.deerflow/threads/t1/outputs/a.md"), "/l/app/.deerflow/threads/t1/outputs/a.md");
  assert.equal(map.localPath("/srv/site/.deerflow/threads/t1/outputs/a.md"), undefined);
  assert.equal(map.localPath("/etc/passwd"), undefined);
  assert.equal(map.localPath("/l/application/x"), undefined, "a sibling folder with the same prefix is not inside");
  assert.equal(map.serverPath("/l/app/notes/x.png"), "/l/app/notes/x.png");
  assert.equal(map.serverPath("/l/site/x.png"), undefined);
});

test("requests carry the server's folder; answers and notifications the local one", () => {
  const map = new WorkspaceMap([local("/l/app")], [{ name: "app", folder: "/srv/app" }], "srv");
  assert.deepEqual(toServerParams("threads/list", { workspaceFolder: "/l/app" }, map), { workspaceFolder: "/srv/app" });
  assert.deepEqual(toServerParams("memory/get", {}, map), {});
  assert.deepEqual(toServerParams("memory/promote", { workspace: "/l/app", section: "user.workContext" }, map), { workspace: "/srv/app", section: "user.workContext" });
  const threads = toLocalResult("threads/list", [{ thread_id: "t", workspace_folder: "/srv/app", title: null, created_at: "", updated_at: "" }], map);
  assert.equal(threads[0]!.workspace_folder, "/l/app");
  const state = { artifacts: [{ path: "/mnt/user-data/outputs/a.md", host_path: "/srv/app/.deerflow/threads/t/outputs/a.md", exists: true }] } as unknown as ThreadStateView;
  assert.equal(toLocalResult("threads/state", state, map).artifacts[0]!.host_path, "", "not shared: no local file to open");
  assert.deepEqual(toLocalNotification("runs/ended", { workspaceFolder: "/srv/app", threadId: "t", runId: "r", status: "success" }, map), {
    workspaceFolder: "/l/app",
    threadId: "t",
    runId: "r",
    status: "success",
  });
  assert.deepEqual(toLocalNotification("sandbox/status", { workspaceFolder: "/srv/other", status: "ready" }, map), { workspaceFolder: "/srv/other", status: "ready" });
});

test("an attachment reaches a remote harness as bytes (uploads/put), never as a path", async () => {
  const shared = new WorkspaceMap([local("/l/app")], [{ name: "app", folder: "/l/app" }], "srv");
  // A path is never sent, even one inside a shared folder.
  assert.throws(() => toServerParams("runs/start", { workspaceFolder: "/l/app", threadId: "t", prompt: "p", files: ["/l/app/a.png"] }, shared), RemoteAttachmentError);
  const dir = mkdtempSync(join(tmpdir(), "deerflow-remote-attach-"));
  const file = join(dir, "notes.txt");
  writeFileSync(file, "my notes");
  const puts: Array<RequestParams<"uploads/put">> = [];
  const sent = await uploadAttachments({ workspaceFolder: "/l/app", threadId: "t", prompt: "p", files: [file] }, (p) => {
    puts.push(p);
    return Promise.resolve({ filename: "notes-1.txt", size: 8, path: "/mnt/user-data/uploads/notes-1.txt" });
  });
  assert.deepEqual(puts, [{ workspaceFolder: "/l/app", threadId: "t", name: "notes.txt", base64: Buffer.from("my notes").toString("base64") }]);
  assert.deepEqual(sent, { workspaceFolder: "/l/app", threadId: "t", prompt: "p", uploaded: ["notes-1.txt"] });
  assert.equal(toServerParams("runs/start", sent, shared).files, undefined);
  await assert.rejects(uploadAttachments({ workspaceFolder: "/l/app", threadId: "t", prompt: "p", files: [join(dir, "missing.txt")] }, () => assert.fail("nothing to put")), RemoteAttachmentError);
});
