/// <reference types="mocha" />
/**
 * The model the host tests run against. The driver (scripts/run-vscode-tests.ts) starts the
 * scripted server and names it in OPENAI_BASE_URL / OPENAI_MODEL, which also covers the
 * extension's no-models-configured fallback. Started by another driver, without that
 * environment, the tests do not skip: the same scripted model runs on a server of our own,
 * configured in the user's settings for the describe block that calls this (and removed after,
 * so the settings tests still see the defaults).
 */
import * as vscode from "vscode";
import { startModelServer, type ModelServer } from "../../fixtures/modelServer.js";
import { hostModelScript } from "../hostModelScript.js";
import { deerflow, execute, harnessReady, next } from "./helpers.js";

export interface ScriptedModel {
  /** The model's name in the picker, and as runs/list reports it. */
  readonly name: string;
}

/** Registers before/after hooks in the calling describe(); `name` is set once they ran. */
export function useScriptedModel(): ScriptedModel {
  const model = { name: "" };
  let server: ModelServer | undefined;
  const cfg = (): vscode.WorkspaceConfiguration => vscode.workspace.getConfiguration("deerflow");
  before(async () => {
    const api = await deerflow();
    await harnessReady(api);
    const fromEnv = process.env["OPENAI_BASE_URL"] ? process.env["OPENAI_MODEL"] : undefined;
    if (fromEnv) {
      model.name = fromEnv;
      return;
    }
    const started = await startModelServer({ script: hostModelScript });
    server = started;
    const configured = next(api.harness.onDidConfigure, (c) => c.settings.models.some((m) => m.base_url === started.url), "harness/configure with the scripted model");
    await cfg().update("models", [{ name: "scripted", model: "scripted", base_url: started.url }], vscode.ConfigurationTarget.Global);
    await cfg().update("defaultModel", "scripted", vscode.ConfigurationTarget.Global);
    await configured;
    await execute("deerflow.selectModel", "scripted");
    model.name = "scripted";
  });
  after(async () => {
    if (!server) return;
    for (const key of ["models", "defaultModel"]) await cfg().update(key, undefined, vscode.ConfigurationTarget.Global);
    await server.close();
    server = undefined;
  });
  return model;
}
