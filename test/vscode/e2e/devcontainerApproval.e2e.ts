/**
 * Dev container approval in the panel (issue 10): the workspace's devcontainer.json would run
 * code on this machine when brought up, so the first run on it is refused before any
 * `devcontainer up`, and a notification offers Show Config and Allow. Allow records exactly the
 * configuration shown and starts the refused run again; its bash call then runs in the container.
 * A real Docker engine (scripts/ci/docker-setup.sh, the registry-free base image) and a real
 * @devcontainers/cli bring-up; the scripted model server plays the model.
 */
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer } from "../../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../scenarios.js";
import { Panel, startDeerFlow } from "../deerflow.js";
import type { DeerFlowSession } from "../deerflow.js";
import { screenshot } from "../workbench.js";
import { defaultCodeServer } from "../codeServers.js";
import { repoRoot } from "../launch.js";
import { disposeFixture, ensureDockerEngine } from "../../devcontainer/helpers/engine.js";
import type { EngineApi } from "../../../extension/harness/sandbox/devcontainer/engineApi.js";

const DEVCONTAINER = readFileSync(join(repoRoot, "test", "fixtures", "devcontainer", "basic", ".devcontainer", "devcontainer.json"), "utf8");

describe(`dev container approval in the panel (code-server ${defaultCodeServer()})`, () => {
  let engine: EngineApi;
  let model: ModelServer;
  let df: DeerFlowSession | undefined;
  let panel: Panel;

  before(async () => {
    engine = await ensureDockerEngine();
    model = await startModelServer({
      script: scenarioScript({
        dc: [
          { toolCalls: [{ name: "bash", args: { description: "Where am I", command: "test -f /.dockerenv && echo inside-the-dev-container" } }] },
          { content: "The command ran inside the dev container." },
        ],
      }),
    });
    df = await startDeerFlow({
      model,
      label: "deerflow-vscode-dc-approval",
      workspaceFiles: { ".devcontainer/devcontainer.json": DEVCONTAINER },
      // Debian's docker client first (it matches the test engine's API); this machine is itself a
      // container, so `auto` would pick the local sandbox: ask for the dev container explicitly.
      env: { PATH: `/usr/bin:${process.env.PATH ?? ""}` },
      settings: { "deerflow.sandboxProvider": "devcontainer" },
    });
    panel = new Panel(df.page);
  });

  after(async () => {
    const workspace = df?.cs.workspace;
    await df?.close();
    await model?.close();
    if (workspace && engine) await disposeFixture(engine, workspace);
  });

  test("the first run asks before any bring-up; Allow starts it again and bash runs in the container", async () => {
    try {
      await panel.open();
      const before = model.requests.length;
      // The run is refused before it starts (its prompt shows with the run Allow starts again).
      await panel.submit(tagged("dc", "Run a command in the sandbox."));
      const prompt = df!.page.locator(".notifications-toasts .notification-list-item", { hasText: "dev container configuration" });
      await prompt.first().waitFor({ timeout: 60_000 });
      assert.match((await prompt.first().textContent()) ?? "", /not approved/);
      assert.equal(model.requests.length, before, "nothing reached the model before the approval");
      assert.deepEqual(await engine.listContainers([`devcontainer.local_folder=${df!.cs.workspace}`]), [], "no container was brought up");
      await prompt.first().getByRole("button", { name: "Show Config" }).waitFor();
      await screenshot(df!.page, "dc-approval-prompt");
      await prompt.first().getByRole("button", { name: "Allow" }).click();
      await panel.message("human", "Run a command in the sandbox.").first().waitFor({ timeout: 60_000 });
      await panel.message("ai", "ran inside the dev container").waitFor({ timeout: 180_000 });
      await panel.status("success").waitFor({ timeout: 30_000 });
      const bash = model.requests.slice(before).flatMap((r) => r.body?.messages ?? []).find((m) => m.role === "tool");
      assert.match(JSON.stringify(bash?.content ?? ""), /inside-the-dev-container/, "the bash result came from inside the container");
      await screenshot(df!.page, "dc-approval-allowed");
    } catch (e) {
      await screenshot(df!.page, "FAILED-dc-approval").catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- code-server log (tail) ---\n${df!.cs.log().split("\n").slice(-30).join("\n")}`, { cause: e });
    }
  });
});
