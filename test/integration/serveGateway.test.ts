// DeerFlow's gateway REST endpoints on `deerflow serve` (issue 32 item 1) and its sign-in (item 2),
// with the requests DeerFlow's web UI makes (../shared/reference/wave4/deerflow-web-contract.md):
// models for the picker, the constant "disabled" features, token usage, paged messages, upload
// limits and list, a thread's files by virtual path (no escape), and the cookie session a browser
// signs in with: public setup/providers, login with the token, me/logout, CSRF on cookie writes,
// cross-site login refused, a wrong password a 401.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startScriptedServe, SERVE_TOKEN, type ServeProcess } from "./helpers/serveProcess.js";
import { startModelServer, type ModelServer } from "../fixtures/modelServer.js";
import type { Dirs } from "./helpers/cli.js";

let model: ModelServer;
let serve: ServeProcess;
let dirs: Dirs;
const auth = { Authorization: `Bearer ${SERVE_TOKEN}`, "Content-Type": "application/json" };
const get = (path: string, headers: Record<string, string> = auth) => fetch(`${serve.url}${path}`, { headers });

before(async () => {
  model = await startModelServer();
  const started = await startScriptedServe(model.url);
  serve = started.serve;
  dirs = started.dirs;
});

after(async () => {
  await serve?.stop();
  await model?.close();
});

async function threadWithRun(): Promise<string> {
  const c = serve.client();
  const t = await c.threads.create();
  model.setScript([{ content: "first answer", usage: { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 } }]);
  await c.runs.wait(t.thread_id, "lead_agent", { input: { messages: [{ role: "user", content: "hello" }] } });
  return t.thread_id;
}

test("models, features, suggestions and channels answer DeerFlow's shapes", async () => {
  const models = (await (await get("/api/models")).json()) as { models: Array<Record<string, unknown>>; token_usage: { enabled: boolean } };
  assert.deepEqual(models.models[0], { name: "scripted", model: "scripted", display_name: "scripted", description: null, supports_thinking: false, supports_reasoning_effort: false });
  assert.equal(models.token_usage.enabled, true);
  assert.deepEqual(await (await get("/api/features")).json(), { agents_api: { enabled: false }, browser_control: { enabled: false }, mcp_tasks: { enabled: false } });
  assert.deepEqual(await (await get("/api/suggestions/config")).json(), { enabled: false, max_suggestions: 3 });
  assert.deepEqual(await (await get("/api/channels/providers")).json(), { enabled: false, providers: [] });
  assert.equal((await get("/api/models", {})).status, 401);
});

test("a thread's token usage and its messages, paged newest first with thread-global seq", async () => {
  const id = await threadWithRun();
  const usage = (await (await get(`/api/threads/${id}/token-usage`)).json()) as Record<string, any>;
  assert.equal(usage.thread_id, id);
  assert.equal(usage.total_tokens, 14);
  assert.equal(usage.total_runs, 1);
  assert.deepEqual(usage.by_model.scripted, { tokens: 14, runs: 1 });

  const page = (await (await get(`/api/threads/${id}/messages/page?limit=1`)).json()) as { data: Array<{ seq: number; content: { type: string; content: unknown } }>; has_more: boolean; next_before_seq: number | null };
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0]!.seq, 2);
  assert.equal(page.data[0]!.content.type, "ai");
  assert.equal(page.has_more, true);
  assert.equal(page.next_before_seq, 2);
  const older = (await (await get(`/api/threads/${id}/messages/page?limit=50&before_seq=2`)).json()) as typeof page;
  assert.deepEqual(older.data.map((d) => [d.seq, d.content.type]), [[1, "human"]]);
  assert.equal(older.has_more, false);
  assert.equal(older.next_before_seq, null);
  assert.equal((await get(`/api/threads/${id}/messages/page?limit=x`)).status, 400);
});

test("uploads' limits and list; a thread's files by virtual path, inline or downloaded, and no escape", async () => {
  const id = (await serve.client().threads.create()).thread_id;
  assert.deepEqual(await (await get(`/api/threads/${id}/uploads/limits`)).json(), { max_files: 10, max_file_size: 52428800, max_total_size: 104857600 });
  const base = join(dirs.workspace, ".deerflow", "threads", id);
  mkdirSync(join(base, "uploads"), { recursive: true });
  mkdirSync(join(base, "outputs"), { recursive: true });
  writeFileSync(join(base, "uploads", "notes.txt"), "my notes");
  writeFileSync(join(base, "outputs", "report.md"), "# Report\n");
  writeFileSync(join(base, "outputs", "page.html"), "<script>alert(1)</script>");
  symlinkSync("/etc/passwd", join(base, "outputs", "passwd.md"));
  writeFileSync(join(dirs.workspace, "secret.txt"), "not a thread file");

  const list = (await (await get(`/api/threads/${id}/uploads/list`)).json()) as { files: Array<Record<string, unknown>>; count: number };
  assert.equal(list.count, 1);
  assert.equal(list.files[0]!.filename, "notes.txt");
  assert.equal(list.files[0]!.virtual_path, "/mnt/user-data/uploads/notes.txt");
  assert.equal(list.files[0]!.artifact_url, `/api/threads/${id}/artifacts/mnt/user-data/uploads/notes.txt`);

  const md = await get(`/api/threads/${id}/artifacts/mnt/user-data/outputs/report.md`);
  assert.equal(md.status, 200);
  assert.equal(await md.text(), "# Report\n");
  assert.match(md.headers.get("content-type")!, /^text\/markdown/);
  assert.match(md.headers.get("content-disposition")!, /^inline; filename="report.md"/);
  const dl = await get(`/api/threads/${id}/artifacts/mnt/user-data/outputs/report.md?download=true`);
  assert.match(dl.headers.get("content-disposition")!, /^attachment/);
  const html = await get(`/api/threads/${id}/artifacts/mnt/user-data/outputs/page.html`);
  assert.match(html.headers.get("content-disposition")!, /^attachment/, "active content is always downloaded");
  assert.doesNotMatch(html.headers.get("content-type")!, /html/);

  for (const escape of [
    "mnt/user-data/outputs/passwd.md",
    "mnt/user-data/outputs/..%2F..%2F..%2F..%2Fsecret.txt",
    "mnt/user-data/outputs/%2e%2e/%2e%2e/%2e%2e/%2e%2e/secret.txt",
    "etc/passwd",
    "mnt/user-data/workspace/../../etc/passwd",
  ]) {
    const r = await get(`/api/threads/${id}/artifacts/${escape}`);
    const text = await r.text();
    assert.ok(r.status >= 400 && r.status < 500, `${escape}: ${r.status}`);
    assert.doesNotMatch(text, /root:|not a thread file/, escape);
  }
  assert.equal((await get(`/api/threads/${id}/artifacts/mnt/user-data/outputs/missing.md`)).status, 404);
});

function cookiesOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(";");
    const eq = pair!.indexOf("=");
    out[pair!.slice(0, eq)] = pair!.slice(eq + 1);
  }
  return out;
}

test("DeerFlow's upload: multipart files land in the thread's uploads (0600), list and delete; a message naming them reaches the model's <current_uploads>; limits and names refused", async () => {
  const id = (await serve.client().threads.create()).thread_id;
  const bearer = { Authorization: `Bearer ${SERVE_TOKEN}` };
  const form = new FormData();
  form.append("files", new Blob(["alpha,beta\n1,2\n"], { type: "text/csv" }), "data.csv");
  form.append("files", new Blob(["hidden"]), "../escape.txt");
  const res = await fetch(`${serve.url}/api/threads/${id}/uploads`, { method: "POST", headers: bearer, body: form });
  assert.equal(res.status, 200, await res.clone().text());
  const up = (await res.json()) as { success: boolean; files: Array<Record<string, any>>; skipped_files: string[]; message: string };
  assert.equal(up.success, true);
  assert.deepEqual(up.files.map((f) => [f.filename, f.size, f.virtual_path, f.artifact_url]), [["data.csv", 15, "/mnt/user-data/uploads/data.csv", `/api/threads/${id}/artifacts/mnt/user-data/uploads/data.csv`]]);
  assert.deepEqual(up.skipped_files, ["../escape.txt"], "a name that is not a plain file name is skipped, and said so");
  const onDisk = join(dirs.workspace, ".deerflow", "threads", id, "uploads", "data.csv");
  assert.equal(statSync(onDisk).mode & 0o777, 0o600);
  assert.equal(existsSync(join(dirs.workspace, ".deerflow", "threads", id, "escape.txt")), false);
  const listed = (await (await get(`/api/threads/${id}/uploads/list`)).json()) as { count: number };
  assert.equal(listed.count, 1);

  // The UI's message: the text, and the file under additional_kwargs.files.
  model.setScript([{ content: "I see the CSV." }]);
  const first = model.requests.length;
  await serve.client().runs.wait(id, "lead_agent", {
    input: { messages: [{ type: "human", content: [{ type: "text", text: "What is in it?" }], additional_kwargs: { files: [{ filename: "data.csv", size: 15, path: "/mnt/user-data/uploads/data.csv", status: "uploaded" }] } }] },
  });
  const sent = JSON.stringify(model.requests.slice(first).find((r) => !JSON.stringify(r.body).includes("Generate a concise title"))?.body?.messages ?? []);
  assert.match(sent, /<current_uploads>[\s\S]*data\.csv[\s\S]*<\/current_uploads>/, "the upload reaches the model");

  const tooMany = new FormData();
  for (let i = 0; i < 11; i++) tooMany.append("files", new Blob(["x"]), `f${i}.txt`);
  const refused = await fetch(`${serve.url}/api/threads/${id}/uploads`, { method: "POST", headers: bearer, body: tooMany });
  assert.equal(refused.status, 413);
  assert.match(((await refused.json()) as { detail: string }).detail, /at most 10/);

  const del = await fetch(`${serve.url}/api/threads/${id}/uploads/data.csv`, { method: "DELETE", headers: bearer });
  assert.deepEqual(await del.json(), { success: true, message: "Deleted data.csv." });
  assert.equal(existsSync(onDisk), false);
  assert.equal((await fetch(`${serve.url}/api/threads/${id}/uploads/data.csv`, { method: "DELETE", headers: bearer })).status, 404);
  assert.equal((await fetch(`${serve.url}/api/threads/${id}/uploads/..%2Fsecret.txt`, { method: "DELETE", headers: bearer })).status, 400);
});

test("the skills, MCP settings and memory pages: the served workspace's skills, servers with their secrets masked, the memory document", async () => {
  mkdirSync(join(dirs.workspace, ".agents", "skills", "csv-helper"), { recursive: true });
  writeFileSync(join(dirs.workspace, ".agents", "skills", "csv-helper", "SKILL.md"), "---\nname: csv-helper\ndescription: Reads CSV files.\n---\nUse it.\n");
  mkdirSync(join(dirs.workspace, ".deerflow"), { recursive: true });
  writeFileSync(join(dirs.workspace, ".deerflow", "extensions_config.json"), JSON.stringify({ mcpServers: { notes: { command: "node", args: ["notes.js"], env: { NOTES_TOKEN: "tok-secret-value" } }, web: { type: "http", url: "https://mcp.example/api", headers: { Authorization: "Bearer hdr-secret" } } } }));
  const skills = (await (await get("/api/skills")).json()) as { skills: Array<Record<string, unknown>> };
  assert.deepEqual(skills.skills.find((k) => k.name === "csv-helper"), { name: "csv-helper", description: "Reads CSV files.", license: null, category: "custom", enabled: true, editable: false });
  const mcpText = await (await get("/api/mcp/config")).text();
  assert.ok(!mcpText.includes("tok-secret-value") && !mcpText.includes("hdr-secret"), "no secret value");
  const mcp = JSON.parse(mcpText) as { mcp_servers: Record<string, Record<string, unknown>> };
  assert.deepEqual(mcp.mcp_servers.notes, { enabled: true, type: "stdio", command: "node", args: ["notes.js"], env: { NOTES_TOKEN: "***" }, url: null, headers: {}, description: "" });
  assert.equal(mcp.mcp_servers.web?.url, "https://mcp.example/api");
  assert.deepEqual(mcp.mcp_servers.web?.headers, { Authorization: "***" });
  const memory = (await (await get("/api/memory")).json()) as Record<string, unknown>;
  assert.equal(memory.version, "1.0");
  assert.ok(Array.isArray(memory.facts) && typeof memory.user === "object" && typeof memory.history === "object", JSON.stringify(memory).slice(0, 300));
});

test("sign-in: the login page's routes are public, the token is the password, the session cookie works wherever the token does", async () => {
  assert.deepEqual(await (await get("/api/v1/auth/setup-status", {})).json(), { needs_setup: false, registration_enabled: false });
  assert.deepEqual(await (await get("/api/v1/auth/providers", {})).json(), { providers: [] });
  const none = await get("/api/threads/search", {});
  assert.equal(none.status, 401);
  assert.equal(((await none.json()) as { detail: { code: string } }).detail.code, "not_authenticated");

  const form = (password: string) => new URLSearchParams({ username: "dev@example.com", password, remember_me: "true" }).toString();
  const login = (password: string, headers: Record<string, string> = {}) =>
    fetch(`${serve.url}/api/v1/auth/login/local`, { method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded", ...headers }, body: form(password) });
  const wrong = await login("not-the-token-at-all");
  assert.equal(wrong.status, 401);
  assert.equal(((await wrong.json()) as { detail: { message: string } }).detail.message, "Incorrect email or password");
  assert.deepEqual(wrong.headers.getSetCookie(), []);
  const host = new URL(serve.url).host;
  const crossSite = await login(SERVE_TOKEN, { Origin: "http://evil.example" });
  assert.equal(crossSite.status, 403);
  assert.equal(((await crossSite.json()) as { detail: string }).detail, "Cross-site auth request denied.");

  const ok = await login(SERVE_TOKEN, { Origin: `http://${host}` });
  assert.equal(ok.status, 200);
  assert.deepEqual(await ok.json(), { expires_in: 604800, needs_setup: false });
  const lines = ok.headers.getSetCookie();
  const session = lines.find((l) => l.startsWith("access_token="))!;
  assert.match(session, /HttpOnly/);
  assert.match(session, /SameSite=Lax/);
  assert.match(session, /Max-Age=604800/);
  const jar = cookiesOf(ok);
  assert.ok(jar.access_token && !jar.access_token.includes(SERVE_TOKEN), "a signed session, not the token");
  assert.ok(jar.csrf_token);
  const cookie = `access_token=${jar.access_token}; csrf_token=${jar.csrf_token}`;

  const me = (await (await get("/api/v1/auth/me", { Cookie: `access_token=${jar.access_token}` })).json()) as { email: string; system_role: string };
  assert.equal(me.email, "dev@example.com");
  assert.equal(me.system_role, "admin");
  assert.equal((await get("/api/models", { Cookie: cookie })).status, 200, "the cookie opens every route");
  const search = (headers: Record<string, string>) => fetch(`${serve.url}/api/threads/search`, { method: "POST", headers: { "Content-Type": "application/json", Cookie: cookie, ...headers }, body: "{}" });
  const noCsrf = await search({});
  assert.equal(noCsrf.status, 403);
  assert.equal(((await noCsrf.json()) as { detail: string }).detail, "CSRF token missing. Include X-CSRF-Token header.");
  assert.equal((await search({ "X-CSRF-Token": "forged" })).status, 403);
  assert.equal((await search({ "X-CSRF-Token": jar.csrf_token })).status, 200);
  const forged = `access_token=${jar.access_token.slice(0, -2)}xx`;
  assert.equal((await get("/api/models", { Cookie: forged })).status, 401, "a tampered session is refused");

  const out = await fetch(`${serve.url}/api/v1/auth/logout`, { method: "POST", headers: { Cookie: cookie } });
  assert.equal(out.status, 200);
  assert.ok(out.headers.getSetCookie().every((l) => /Max-Age=0/.test(l)), "both cookies expire");
});
