/**
 * What the scripted model answers in the extension-host tests, shared by the driver
 * (scripts/run-vscode-tests.ts, which passes its server's URL in OPENAI_BASE_URL) and by the run
 * tests when the suite runs without one (test/vscode/suite/run.test.ts starts its own server).
 * A prompt with HANG gets no answer until the run is cancelled (the cancel test); others a greeting.
 */
import type { ScriptFn } from "../fixtures/modelServer.js";

export const hostModelScript: ScriptFn = (request) => {
  const lastUser = [...(request.body?.messages ?? [])].reverse().find((m) => m.role === "user");
  return JSON.stringify(lastUser?.content ?? "").includes("HANG") ? { hang: true } : { content: "Hello from the scripted model." };
};
