/**
 * Issue 13 in the panel, in a real VS Code (code-server + chromium) against the scripted model
 * server: a parallel batch of two host bash calls waits for approval, its cards survive a window
 * reload, one is approved and one rejected (with a reason) in the panel, and the run goes on with
 * both results; a pending write opens VS Code's diff editor (current ↔ proposed) and, once
 * approved, shows under "Changed files (1)" with Open Diff (before ↔ now) and Revert, which
 * restores the file on disk.
 *
 * Issue 21: a card's "Always allow" shows what it covers (a bash command prefix and where it
 * runs); chosen, the next command with that prefix runs without a card; a protected write's card
 * offers none and says so; two calls the model gave one id get two cards, decided together.
 *
 * Issue 23: the MCP Servers section lists the user's own server (server-everything over stdio,
 * from the registry) ready with its tools, and a workspace server as needing approval until Allow
 * (after the modal that says what it runs); a call to the user server's echo gets a card naming
 * the server and the tool, and once approved its result shows in the panel.
 *
 * The policy comes from user settings (the only scope it is read from): host commands on, shell
 * and write "ask"; mcp asks by default. Screenshots go to test-results/vscode/<code-server version>/approvals-*.png.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import type { Scenarios } from "../scenarios.js";
import { CONTAINER_TITLE, Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { failureCapture, shows } from "./steps.js";
import type { Locator } from "playwright-core";
import { editorTab, openWorkbench, runCommand, screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";

const ORIGINAL = "Shopping list:\n- apples\n- pears\n";
const EDITED = "Shopping list:\n- apples\n- pears\n- cherries (added by DeerFlow)\n";
const ws = (name: string): string => `/mnt/user-data/workspace/${name}`;
/** server-everything from node_modules (a devDependency), run by this Node: the registry's server, not ours. */
const EVERYTHING = resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const everything = { command: process.execPath, args: [EVERYTHING, "stdio"] };
const MCP_ECHO = "hello from the panel";
const bash = (id: string, command: string) => ({ id, name: "bash", args: { description: `Run ${id}`, command } });

const SCENARIOS: Scenarios = {
  batch: [
    // The approved command writes its file, then fails: its card must read Failed, not done.
    { toolCalls: [bash("call_yes", `echo yes > ${ws("yes.txt")} && exit 254`), bash("call_no", `echo no > ${ws("no.txt")}`)] },
    { content: "One command ran and one was rejected." },
  ],
  edit: [
    { toolCalls: [{ id: "call_read", name: "read_file", args: { description: "Read the list", path: ws("notes.txt") } }] },
    { toolCalls: [{ id: "call_write", name: "write_file", args: { description: "Add cherries", path: ws("notes.txt"), content: EDITED } }] },
    { content: "The list has cherries now." },
  ],
  // Issue 30 item 4: a message typed while the write waits is the answer to it.
  answer: [
    { toolCalls: [{ id: "call_read2", name: "read_file", args: { description: "Read the list", path: ws("notes.txt") } }] },
    { toolCalls: [{ id: "call_write2", name: "write_file", args: { description: "Replace the list", path: ws("notes.txt"), content: "gone\n" } }] },
  ],
  answered: [{ content: "Fine, notes.txt stays as it is." }],
  // Issue 21: "Always allow" covers the command prefix the card showed; a protected write offers none.
  always: [
    { toolCalls: [bash("call_mk1", `mkdir -p ${ws("made1")}`)] },
    { toolCalls: [bash("call_mk2", `mkdir -p ${ws("made2")}`)] },
    { toolCalls: [{ id: "call_prot", name: "write_file", args: { description: "Hook", path: ws(".husky/pre-commit"), content: "echo hook\n" } }] },
    { content: "Made two folders; the hook was left alone." },
  ],
  // Issue 21: two calls under one id get two cards the panel can decide.
  dup: [
    { toolCalls: [bash("dup", `echo a > ${ws("dup-a.txt")}`), bash("dup", `echo b > ${ws("dup-b.txt")}`)] },
    { content: "Both ran." },
  ],
  mcp: [
    { toolCalls: [{ id: "call_mcp_echo", name: "everything_echo", args: { message: MCP_ECHO } }] },
    { content: "The MCP server echoed your words." },
  ],
  // Held after its first chunk, so the test can hide the panel before the run pauses.
  hidden: [
    { toolCalls: [bash("call_hidden", `echo hidden > ${ws("hidden.txt")}`)], gate: { afterChunks: 1, until: "hidden" } },
    { content: "It ran after you approved it from the notification." },
  ],
};

describe(`DeerFlow approvals and changed files in VS Code (code-server ${defaultCodeServer()} + chromium)`, () => {
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;
  /** The user's own MCP configuration (DEER_FLOW_EXTENSIONS_CONFIG_PATH), outside the workspace. */
  const userConfigDir = mkdtempSync(join(tmpdir(), "deerflow-e2e-mcp-"));
  const userConfig = join(userConfigDir, "extensions_config.json");
  writeFileSync(userConfig, JSON.stringify({ mcpServers: { everything } }));

  before(async () => {
    model = await startModelServer({ script: scenarioScript(SCENARIOS), chunkDelayMs: 5, waitTimeoutMs: 60_000 });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-approvals",
      workspaceFiles: {
        "notes.txt": ORIGINAL,
        // A workspace's server: it must wait for the user's Allow.
        ".deerflow/extensions_config.json": JSON.stringify({ mcpServers: { "workspace-everything": everything } }),
      },
      env: { DEER_FLOW_EXTENSIONS_CONFIG_PATH: userConfig },
      settings: { "deerflow.allowHostCommands": true, "deerflow.approval.shell": "ask", "deerflow.approval.write": "ask" },
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    await df?.close();
    await model?.close();
    rmSync(userConfigDir, { recursive: true, force: true });
  });

  const step = failureCapture(() => df, "approvals-");

  const card = (toolCallId: string): Locator => panel.view.locator(`[data-testid="approval-card"][data-tool-call-id="${toolCallId}"]`);
  const approvals = (): Locator => panel.view.getByTestId("approvals");
  const needsApproval = (): Locator => df!.page.locator(".statusbar-item", { hasText: "DeerFlow: needs approval" });

  test("a parallel batch of two bash calls: cards survive a reload; approve one, reject one, the run goes on; the cards read Failed and Rejected", () =>
    step("batch", async () => {
      await panel.open();
      await panel.send(tagged("batch", "Write yes.txt and no.txt with bash."));
      await shows(card("call_yes"), "an approval card for the first bash call");
      await shows(card("call_no"), "an approval card for the second bash call");
      assert.equal(await card("call_yes").getByTestId("approval-class").textContent(), "shell");
      assert.match((await card("call_yes").textContent()) ?? "", /echo yes > \/mnt\/user-data\/workspace\/yes\.txt/, "the card shows the command");
      assert.equal(existsSync(join(df!.cs.workspace, "yes.txt")), false, "nothing ran before the decision");
      await shows(needsApproval(), "the status bar's 'DeerFlow: needs approval'");
      await screenshot(df!.page, "approvals-01-batch-cards");

      // The cards come back from the thread's state after a window reload.
      await openWorkbench(df!.page, undefined, CONTAINER_TITLE);
      await panel.open();
      await shows(card("call_yes"), "the first card after a window reload");
      await shows(card("call_no"), "the second card after a window reload");

      const asked = model.requests.length;
      await card("call_yes").getByRole("button", { name: "Approve", exact: true }).click();
      await shows(card("call_yes").getByTestId("approval-chosen"), "the first card shows it is approved");
      await shows(panel.view.getByTestId("approval-remaining").filter({ hasText: "1 of 2 decided; waiting on: bash" }), "the bar says one call remains");
      assert.equal(model.requests.length, asked, "nothing is sent before every call is decided");
      await screenshot(df!.page, "approvals-02-one-decided");
      await card("call_no").getByTestId("reject-reason").fill("not this one");
      await card("call_no").getByRole("button", { name: "Reject", exact: true }).click();

      await shows(panel.message("ai", "One command ran and one was rejected."), "the run goes on after the decision");
      await approvals().waitFor({ state: "hidden", timeout: 20_000 });
      await shows(panel.status("success"), "the resumed run ends success");
      await needsApproval().waitFor({ state: "hidden", timeout: 20_000 });
      const sent = model.requests.slice(asked).flatMap((r) => r.body?.messages ?? []).filter((m) => m.role === "tool");
      const result = (id: string): string => JSON.stringify(sent.find((m) => (m as { tool_call_id?: string }).tool_call_id === id)?.content ?? "");
      assert.match(result("call_no"), /Rejected by the user: not this one/, "the model gets the rejection with its reason");
      assert.doesNotMatch(result("call_yes"), /Rejected/, "the approved call has its own result");
      assert.equal(readFileSync(join(df!.cs.workspace, "yes.txt"), "utf8").trim(), "yes", "the approved command ran");
      assert.equal(existsSync(join(df!.cs.workspace, "no.txt")), false, "the rejected command did not run");
      // Outcomes in words and in the cards' accessible names (issue 30 item 3).
      const toolCard = (id: string): Locator => panel.view.locator(`[data-testid="tool-call"][data-tool-call-id="${id}"]`);
      await shows(toolCard("call_no").getByTestId("tool-outcome").filter({ hasText: "Rejected: not this one" }), "the rejected call's card reads Rejected with the reason");
      await shows(toolCard("call_yes").getByTestId("tool-outcome").filter({ hasText: "Failed (exit code 254)" }), "the approved call that exited 254 reads Failed with its exit code");
      assert.equal(await toolCard("call_no").getAttribute("data-status"), "rejected");
      assert.equal(await toolCard("call_yes").getAttribute("data-status"), "error");
      assert.match((await toolCard("call_no").locator("summary").getAttribute("aria-label")) ?? "", /rejected: not this one/);
      assert.match((await toolCard("call_yes").locator("summary").getAttribute("aria-label")) ?? "", /failed \(exit code 254\)/);
      await screenshot(df!.page, "approvals-03-decided");
    }));

  test("a pending write opens a diff; approved, its file is listed under Changed files, diffed and reverted", () =>
    step("edit", async () => {
      const notes = join(df!.cs.workspace, "notes.txt");
      await panel.send(tagged("edit", "Add cherries to notes.txt."));
      await shows(card("call_write"), "an approval card for the write");
      await card("call_write").getByRole("button", { name: "Open Diff" }).click();
      const page = df!.page;
      await shows(page.locator(".tabs-container .tab", { hasText: "proposed by DeerFlow" }), "the diff editor's tab (current ↔ proposed)");
      await shows(page.locator(".monaco-diff-editor .editor.modified .view-lines", { hasText: "cherries (added by DeerFlow)" }), "the proposed content in the diff editor");
      assert.equal(readFileSync(notes, "utf8"), ORIGINAL, "the proposal is not written to disk");
      await screenshot(page, "approvals-04-proposed-diff");

      await card("call_write").getByRole("button", { name: "Approve", exact: true }).click();
      await shows(panel.message("ai", "The list has cherries now."), "the run goes on after the write is approved");
      await shows(panel.status("success"), "the run ends success");
      assert.equal(readFileSync(notes, "utf8"), EDITED);

      const changed = panel.view.getByTestId("changed-file").filter({ hasText: "notes.txt" }).first();
      await shows(changed, "notes.txt under Changed files");
      await shows(panel.view.getByTestId("run-changes").filter({ hasText: "Changed files (1)" }).first(), "the run's Changed files (1)");
      await changed.getByTestId("open-change-diff").click();
      await shows(page.locator(".tabs-container .tab", { hasText: "before the run" }), "the diff editor's tab (before ↔ now)");
      await screenshot(page, "approvals-05-changed-files-diff");

      await changed.getByTestId("revert-file").click();
      await shows(changed.getByTestId("changed-reverted"), "notes.txt marked reverted");
      assert.equal(readFileSync(notes, "utf8"), ORIGINAL, "the file on disk is restored");
      await screenshot(page, "approvals-06-reverted");
    }));

  test("a message sent while a write waits rejects it with that text; the model receives it and the run goes on", () =>
    step("answer", async () => {
      const notes = join(df!.cs.workspace, "notes.txt");
      const before = readFileSync(notes, "utf8");
      await panel.send(tagged("answer", "Rewrite notes.txt."));
      await shows(card("call_write2"), "an approval card for the write");
      const asked = model.requests.length;
      const reply = tagged("answered", "Not that file: keep notes.txt as it is.");
      await panel.send(reply);
      await shows(panel.message("ai", "Fine, notes.txt stays as it is."), "the run goes on with the typed message");
      await approvals().waitFor({ state: "hidden", timeout: 20_000 });
      const toolCard = panel.view.locator('[data-testid="tool-call"][data-tool-call-id="call_write2"]');
      await shows(toolCard.getByTestId("tool-outcome").filter({ hasText: "Rejected: Not that file: keep notes.txt as it is." }), "the write's card reads Rejected with the typed message");
      assert.equal(await panel.view.getByRole("alert").count(), 0, "no busy-thread error");
      const sent = model.requests.slice(asked).flatMap((r) => r.body?.messages ?? []);
      const rejection = sent.find((m) => m.role === "tool" && (m as { tool_call_id?: string }).tool_call_id === "call_write2");
      assert.equal(rejection?.content, `Rejected by the user: ${reply}`, "the model reads the typed message as the reason");
      assert.equal(readFileSync(notes, "utf8"), before, "the rejected write never ran");
      await screenshot(df!.page, "approvals-06b-answered-by-message");
    }));

  test("a run that pauses while the panel is hidden raises a notification whose Open shows its cards", () =>
    step("notification", async () => {
      const page = df!.page;
      await panel.send(tagged("hidden", "Write hidden.txt with bash."));
      await model.waitForGate("hidden");
      await runCommand(page, "View: Show Explorer");
      await panel.messageBox.waitFor({ state: "detached", timeout: 20_000 });
      model.gate("hidden").open();
      const toast = page.locator(".notification-toast", { hasText: "DeerFlow needs your approval: bash" });
      await shows(toast, "the notification 'DeerFlow needs your approval: bash …'");
      await shows(needsApproval(), "the status bar's 'DeerFlow: needs approval'");
      const open = toast.getByRole("button", { name: "Open" });
      await shows(open, "the notification's Open button");
      await screenshot(page, "approvals-07-notification");
      await open.click();
      await shows(card("call_hidden"), "the paused call's card after Open");
      await card("call_hidden").getByRole("button", { name: "Approve", exact: true }).click();
      await shows(panel.message("ai", "It ran after you approved it"), "the run goes on after the approval");
      await needsApproval().waitFor({ state: "hidden", timeout: 20_000 });
      assert.equal(readFileSync(join(df!.cs.workspace, "hidden.txt"), "utf8").trim(), "hidden");
    }));

  test("Always allow shows its scope: the card's command prefix runs without a card afterwards; a protected write offers none", () =>
    step("always", async () => {
      await panel.send(tagged("always", "Make two folders, then add a hook."));
      await shows(card("call_mk1"), "an approval card for the first mkdir");
      const always = card("call_mk1").getByTestId("always-allow");
      assert.equal((await always.textContent())?.trim(), 'Always allow commands starting with "mkdir" on this machine in this thread', "the button says what it covers");
      await screenshot(df!.page, "approvals-08-always-allow-scope");
      await always.click();
      await shows(card("call_prot"), "the protected write's card (the second mkdir ran without one)");
      assert.ok(existsSync(join(df!.cs.workspace, "made1")) && existsSync(join(df!.cs.workspace, "made2")), "both mkdir calls ran");
      assert.equal(await card("call_mk2").count(), 0, "the covered command had no card");
      assert.equal(await card("call_prot").getByTestId("approval-class").textContent(), "protected");
      assert.equal(await card("call_prot").getByTestId("always-allow").count(), 0, "no Always allow for a protected write");
      assert.equal((await card("call_prot").getByTestId("approve-once-only").textContent())?.trim(), "A protected write is asked every time.");
      await screenshot(df!.page, "approvals-09-protected-once");
      await card("call_prot").getByRole("button", { name: "Reject", exact: true }).click();
      await shows(panel.message("ai", "Made two folders; the hook was left alone."), "the run goes on after the rejection");
      await shows(panel.status("success"), "the run ends success");
      assert.equal(existsSync(join(df!.cs.workspace, ".husky", "pre-commit")), false, "the protected write did not run");
    }));

  test("two calls the model gave one id: two cards with their own ids, decided together, and the run goes on", () =>
    step("dup", async () => {
      await panel.send(tagged("dup", "Write dup-a.txt and dup-b.txt."));
      const cards = panel.view.getByTestId("approval-card");
      await shows(cards.nth(1), "a second card for the second call");
      const ids = await cards.evaluateAll((els) => els.map((e) => e.getAttribute("data-tool-call-id")));
      assert.equal(ids.length, 2);
      assert.equal(ids[0], "dup");
      assert.notEqual(ids[1], "dup", "the second call has its own id");
      await panel.view.getByRole("button", { name: "Approve all" }).click();
      await shows(panel.message("ai", "Both ran."), "the run goes on after the decision");
      await approvals().waitFor({ state: "hidden", timeout: 20_000 });
      assert.equal(readFileSync(join(df!.cs.workspace, "dup-a.txt"), "utf8").trim(), "a");
      assert.equal(readFileSync(join(df!.cs.workspace, "dup-b.txt"), "utf8").trim(), "b");
    }));

  test("MCP: the section lists the user's server ready with its tools and a workspace server until Allow; an echo call's card names server and tool; approved, its result shows", () =>
    step("mcp", async () => {
      const page = df!.page;
      const section = panel.view.getByTestId("mcp-section");
      await shows(section, "the MCP Servers section");
      if ((await section.getAttribute("open")) === null) await section.locator("summary").first().click();
      const server = (name: string, state: string): Locator => section.locator(`[data-testid="mcp-server"][data-name="${name}"][data-state="${state}"]`);
      await shows(server("everything", "ready"), "server-everything listed ready", 90_000);
      assert.match((await server("everything", "ready").getByTestId("mcp-state").textContent()) ?? "", /^ready · \d+ tools$/, "the state says how many tools");
      assert.equal(await server("everything", "ready").getByTestId("mcp-source").textContent(), "DEER_FLOW_EXTENSIONS_CONFIG_PATH");
      await server("everything", "ready").getByTestId("mcp-tools").locator("summary").click();
      await shows(server("everything", "ready").locator('[data-testid="mcp-tool"][data-name="everything_echo"]'), "its echo tool in the list");
      await screenshot(page, "approvals-10-mcp-servers");

      // The workspace's server does not start before Allow, and Allow first says what it runs.
      const waiting = server("workspace-everything", "needs_approval");
      await shows(waiting, "the workspace's server waiting for approval");
      await waiting.getByTestId("mcp-allow").click();
      const dialog = page.locator(".monaco-dialog-box", { hasText: 'Allow the MCP server "workspace-everything"' });
      await shows(dialog, "the Allow dialog for the workspace's server");
      assert.match((await dialog.textContent()) ?? "", /server-everything/, "the dialog shows what it runs");
      await screenshot(page, "approvals-11-mcp-allow");
      await dialog.getByRole("button", { name: "Allow" }).click();
      await shows(server("workspace-everything", "ready"), "the workspace's server ready after Allow", 90_000);

      await panel.send(tagged("mcp", "Echo my words with the MCP server."));
      const c = card("call_mcp_echo");
      await shows(c, "an approval card for the MCP call");
      assert.equal(await c.getByTestId("approval-class").textContent(), "mcp");
      assert.equal(await c.getByTestId("approval-mcp-server").textContent(), "everything");
      assert.equal(await c.getByTestId("approval-mcp-tool").textContent(), "echo");
      assert.match((await c.textContent()) ?? "", new RegExp(MCP_ECHO), "the card shows the arguments");
      await screenshot(page, "approvals-12-mcp-card");
      await c.getByRole("button", { name: "Approve", exact: true }).click();
      await shows(panel.message("ai", "The MCP server echoed your words."), "the run goes on after the approval");
      await shows(panel.status("success"), "the run ends success");
      const call = panel.view.locator('[data-testid="tool-call"][data-tool-call-id="call_mcp_echo"]');
      await call.locator("summary").click();
      await shows(call.getByTestId("tool-result").filter({ hasText: `Echo: ${MCP_ECHO}` }), "the tool's result in the panel");
      await screenshot(page, "approvals-13-mcp-result");

      // Each server's log: from its row, and from "DeerFlow: Show MCP Logs" (a pick among the two).
      await server("everything", "ready").getByTestId("mcp-log").click();
      await shows(editorTab(page, "everything.log"), "the everything server's log in an editor");
      await shows(page.locator(".monaco-editor .view-lines", { hasText: "[deerflow] ready:" }).first(), "its lifecycle lines");
      // Not runCommand: it waits for the palette to close, and this command keeps it open for its pick.
      await page.keyboard.press("F1");
      const input = page.locator(".quick-input-widget input[type='text']");
      await input.fill(">DeerFlow: Show MCP Logs");
      await shows(page.locator(".quick-input-list .monaco-list-row.focused", { hasText: "DeerFlow: Show MCP Logs" }), "the command in the palette");
      await page.keyboard.press("Enter");
      const pick = page.locator(".quick-input-widget input[placeholder='The MCP server whose log to open']");
      await shows(pick, "the pick of servers");
      await pick.fill("workspace-everything");
      await shows(page.locator(".quick-input-list .monaco-list-row.focused", { hasText: "workspace-everything" }), "the workspace server picked");
      await page.keyboard.press("Enter");
      await shows(editorTab(page, "workspace-everything.log"), "the workspace server's log after Show MCP Logs");
    }));
});
