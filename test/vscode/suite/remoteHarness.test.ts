/// <reference types="mocha" />
// Issue 26 item 4, in the extension host: `deerflow.harness.url` moves the harness client onto a
// remote harness, and only from the user's settings; the token set with its command travels in
// the upgrade's Authorization header (never in settings or state); an empty URL is the local
// harness again, started as before. The "server" here is a real `ws` server on loopback that
// answers every upgrade 401 and records the header (the panel against a real `deerflow serve`
// is test/vscode/e2e/remote.e2e.ts).
import * as assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as vscode from "vscode";
import { deerflow, execute, folderPath, harnessReady, next } from "./helpers.js";

const TOKEN = "suite-remote-token-42";

describe("a remote harness: deerflow.harness.url and its token", () => {
  const cfg = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("deerflow");
  const settingsFile = (): string => join(folderPath(), ".vscode", "settings.json");
  let saved: string | undefined;
  let hadDir = true;
  let server: Server;
  let url = "";
  const seen: Array<string | undefined> = [];

  before(async () => {
    hadDir = existsSync(join(folderPath(), ".vscode"));
    saved = existsSync(settingsFile()) ? readFileSync(settingsFile(), "utf8") : undefined;
    server = createServer((_req, res) => res.writeHead(404).end());
    server.on("upgrade", (req, socket) => {
      seen.push(req.headers.authorization);
      socket.end("HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n");
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(async () => {
    if (saved === undefined) rmSync(settingsFile(), { force: true });
    else writeFileSync(settingsFile(), saved);
    if (!hadDir) rmSync(join(folderPath(), ".vscode"), { recursive: true, force: true });
    await cfg().update("harness.url", undefined, vscode.ConfigurationTarget.Global);
    await new Promise((r) => server.close(r));
  });

  it("a workspace's .vscode/settings.json cannot point the extension at a server", async () => {
    const api = await deerflow();
    const pid = await harnessReady(api);
    const changed = next(vscode.workspace.onDidChangeConfiguration, (e) => e.affectsConfiguration("deerflow.harness.url"), "VS Code reading .vscode/settings.json");
    mkdirSync(join(folderPath(), ".vscode"), { recursive: true });
    writeFileSync(settingsFile(), JSON.stringify({ "deerflow.harness.url": url }, null, 2));
    await changed;
    assert.equal(cfg().get("harness.url"), "", "machine scope: VS Code does not apply the workspace's value");
    // A retarget would have stopped this process and fired a connection change; both are checked after a round trip.
    await api.harness.request("threads/list", { workspaceFolder: folderPath() });
    assert.equal(api.harness.connectionStatus.kind, "local");
    assert.equal(api.harness.process?.pid, pid, "still the same local harness");
    assert.deepEqual(seen, [], "the server was never contacted");
  });

  it("the user's URL connects (a 401 says to set the token), the token set by its command goes in the header, and an empty URL is the local harness again", async () => {
    const api = await deerflow();
    await harnessReady(api);
    const refused = next(api.harness.onDidChangeConnection, (c) => c.kind === "remote" && c.state === "unauthorized", "the server's 401 without a token");
    const failed = next(api.harness.onDidFail, () => true, "the failure shown for the 401");
    await cfg().update("harness.url", url, vscode.ConfigurationTarget.Global);
    const c = await refused;
    assert.match((c as { message: string }).message, /needs a token \(HTTP 401\)\. Set it with DeerFlow: Set Remote Harness Token/);
    assert.match(await failed, /needs a token \(HTTP 401\)/);
    assert.equal(seen.at(-1), undefined, "no Authorization header without a token");
    await assert.rejects(api.harness.request("threads/list", { workspaceFolder: folderPath() }), /needs a token/, "requests fail with what to do, not hang");

    const again = next(api.harness.onDidChangeConnection, (x) => x.kind === "remote" && x.state === "unauthorized", "the 401 for the token");
    assert.equal(await execute("deerflow.setRemoteToken", TOKEN), true);
    assert.match((await again as { message: string }).message, /refused the token \(HTTP 401\)/);
    assert.equal(seen.at(-1), `Bearer ${TOKEN}`, "the token went in the upgrade's Authorization header");
    assert.doesNotMatch(api.storedState(), new RegExp(TOKEN), "not in globalState or workspaceState");
    assert.doesNotMatch(JSON.stringify(cfg()), new RegExp(TOKEN), "not in settings");

    const local = next(api.harness.onDidStart, () => true, "the local harness starting again", 60_000);
    await cfg().update("harness.url", undefined, vscode.ConfigurationTarget.Global);
    const started = await local;
    assert.equal(api.harness.connectionStatus.kind, "local");
    assert.equal(api.harness.remote, undefined);
    assert.equal(api.harness.process?.pid, started.pid);
    assert.ok(Array.isArray(await api.harness.request("threads/list", { workspaceFolder: folderPath() })), "the local harness answers");
    assert.equal(await execute("deerflow.clearRemoteToken"), false, "no URL: nothing to clear (it says so)");
  });
});
