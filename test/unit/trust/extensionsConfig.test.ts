// The one locator of the user's extensions_config.json (trust/extensionsConfig.ts): MCP
// (mcp/sources.ts) and skills (skills/enabledState.ts) read the same file, and the skills toggle
// writes the file MCP reads, under DEER_FLOW_EXTENSIONS_CONFIG_PATH, without it, and with only
// the legacy mcp_config.json. Real files; nothing is faked.
import { describe, it } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadDefinitions } from "../../../extension/harness/mcp/config.js";
import { mcpSources } from "../../../extension/harness/mcp/sources.js";
import { extensionsConfigFiles, readEnabledState, writeSkillEnabled } from "../../../extension/harness/skills/enabledState.js";
import { userExtensionsConfig } from "../../../extension/harness/trust/extensionsConfig.js";

function dirs(t: { after: (fn: () => void) => void }) {
  const root = mkdtempSync(join(tmpdir(), "deerflow-extcfg-"));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  const dataDir = join(root, "data");
  const workspace = join(root, "ws");
  mkdirSync(dataDir);
  mkdirSync(workspace);
  return { root, dataDir, workspace };
}

const config = { mcpServers: { files: { type: "stdio", command: "node", args: ["server.js"] } } };

/** The file MCP reads as the user's DeerFlow configuration, and the server names it finds there. */
function mcpView(dataDir: string, workspace: string, env: NodeJS.ProcessEnv) {
  const { sources, diagnostics } = mcpSources({ dataDir, workspaceFolder: workspace, env });
  const user = sources.filter((s) => s.scope === "user" && s.format === "deerflow");
  assert.equal(user.length, 1);
  const loaded = loadDefinitions(user, { env, workspaceFolder: workspace, home: tmpdir(), secrets: () => undefined });
  return { file: user[0]!.file, label: user[0]!.label, servers: loaded.servers.map((s) => s.name), diagnostics };
}

/** The skills' side: what they read, and whether `name` is disabled. */
function skillsView(dataDir: string, workspace: string, env: NodeJS.ProcessEnv, name: string) {
  const files = extensionsConfigFiles({ dataDir, workspaceFolder: workspace, workspaceTrusted: false, env });
  return { files, disabled: readEnabledState(files).disabled.has(name) };
}

/** Both sides agree on the file; a skills write lands in it with the MCP servers kept, and both see it. */
function roundTrip(dataDir: string, workspace: string, env: NodeJS.ProcessEnv, expected: string): void {
  const mcp = mcpView(dataDir, workspace, env);
  assert.equal(mcp.file, expected);
  assert.deepEqual(mcp.servers, ["files"]);
  assert.deepEqual(skillsView(dataDir, workspace, env, "webapp-testing").files, [expected]);

  assert.equal(writeSkillEnabled(dataDir, "webapp-testing", false, env), expected);
  assert.equal(skillsView(dataDir, workspace, env, "webapp-testing").disabled, true);
  const written = JSON.parse(readFileSync(expected, "utf8")) as Record<string, unknown>;
  assert.deepEqual(written, { ...config, skills: { "webapp-testing": { enabled: false } } }, "the MCP servers kept beside the skill");
  assert.deepEqual(mcpView(dataDir, workspace, env).servers, ["files"], "MCP still reads its server from the file skills wrote");

  assert.equal(writeSkillEnabled(dataDir, "webapp-testing", true, env), expected);
  assert.equal(skillsView(dataDir, workspace, env, "webapp-testing").disabled, false);
}

describe("extensions_config.json: MCP and skills use one file", () => {
  it("under DEER_FLOW_EXTENSIONS_CONFIG_PATH: the named file alone, for both; the data dir's own is neither read nor written", (t) => {
    const { root, dataDir, workspace } = dirs(t);
    const named = join(root, "elsewhere", "extensions_config.json");
    mkdirSync(join(root, "elsewhere"));
    writeFileSync(named, JSON.stringify(config));
    // The data dir's file would disable the skill and define another server: not read when a file is named.
    const own = join(dataDir, "extensions_config.json");
    const ownText = JSON.stringify({ mcpServers: { other: { command: "x" } }, skills: { "webapp-testing": { enabled: false } } });
    writeFileSync(own, ownText);
    const env = { DEER_FLOW_EXTENSIONS_CONFIG_PATH: named };
    assert.equal(mcpView(dataDir, workspace, env).label, "DEER_FLOW_EXTENSIONS_CONFIG_PATH");
    roundTrip(dataDir, workspace, env, named);
    assert.equal(readFileSync(own, "utf8"), ownText, "the data dir's file is untouched");
  });

  it("without it: <data-dir>/extensions_config.json for both", (t) => {
    const { dataDir, workspace } = dirs(t);
    const file = join(dataDir, "extensions_config.json");
    writeFileSync(file, JSON.stringify(config));
    // A legacy file beside it is not read once extensions_config.json exists.
    writeFileSync(join(dataDir, "mcp_config.json"), JSON.stringify({ mcpServers: { legacy: { command: "x" } } }));
    roundTrip(dataDir, workspace, {}, file);
  });

  it("with only the legacy mcp_config.json: both read it and the skills toggle writes it (DeerFlow's resolve_config_path)", (t) => {
    const { dataDir, workspace } = dirs(t);
    const legacy = join(dataDir, "mcp_config.json");
    writeFileSync(legacy, JSON.stringify(config));
    assert.equal(mcpView(dataDir, workspace, {}).label, "the data directory's mcp_config.json");
    roundTrip(dataDir, workspace, {}, legacy);
    assert.equal(existsSync(join(dataDir, "extensions_config.json")), false);
  });

  it("with neither: the data dir's extensions_config.json, created by the first skills write", (t) => {
    const { dataDir } = dirs(t);
    assert.deepEqual(userExtensionsConfig(dataDir, {}), { file: join(dataDir, "extensions_config.json"), via: "data-dir", missing: false });
    writeSkillEnabled(dataDir, "webapp-testing", false, {});
    assert.deepEqual(JSON.parse(readFileSync(join(dataDir, "extensions_config.json"), "utf8")), { skills: { "webapp-testing": { enabled: false } } });
  });

  it("a named file that does not exist is reported by MCP and created by a skills write", (t) => {
    const { root, dataDir, workspace } = dirs(t);
    const named = join(root, "missing.json");
    const env = { DEER_FLOW_EXTENSIONS_CONFIG_PATH: named };
    assert.equal(userExtensionsConfig(dataDir, env).missing, true);
    assert.match(mcpView(dataDir, workspace, env).diagnostics[0]?.message ?? "", /DEER_FLOW_EXTENSIONS_CONFIG_PATH names a file that does not exist/);
    assert.equal(writeSkillEnabled(dataDir, "webapp-testing", false, env), named);
    assert.equal(skillsView(dataDir, workspace, env, "webapp-testing").disabled, true);
  });
});
