/**
 * One scripted model for a whole VS Code suite. The suite runs one code-server (one harness, one
 * thread after another), so replies are chosen by the prompt, not by arrival order: every prompt
 * carries a tag `[e2e:NAME]`, and the reply is `scenarios[NAME][step]`, where `step` counts the
 * assistant messages already sent after that prompt (0 for the first model call of the turn, 1
 * after the first tool results, ...). A retried or repeated call therefore gets the same reply,
 * and a title request (the title model's own prompt quotes the user text) is answered with a
 * title instead of consuming a step.
 */
import type { RecordedRequest, RequestMessage, ScriptFn, ScriptedReply } from "../fixtures/modelServer.js";

export type Scenarios = Readonly<Record<string, readonly ScriptedReply[]>>;

const TAG = /\[e2e:([\w-]+)\]/;

function text(m: RequestMessage): string {
  if (typeof m.content === "string") return m.content;
  return (m.content ?? []).map((p) => (typeof p.text === "string" ? p.text : "")).join("\n");
}

export function tagged(name: string, prompt: string): string {
  return `${prompt} [e2e:${name}]`;
}

export function scenarioScript(scenarios: Scenarios): ScriptFn {
  return (request: RecordedRequest) => {
    const messages = request.body?.messages ?? [];
    const last = messages.at(-1);
    if (last && last.role === "user" && text(last).startsWith("Generate a concise title")) {
      return { content: "E2E thread" };
    }
    for (let i = messages.length - 1; i >= 0; i--) {
      const m = messages[i]!;
      if (m.role !== "user") continue;
      const name = TAG.exec(text(m))?.[1];
      if (!name) continue;
      const replies = scenarios[name];
      if (!replies) return { content: `No scenario named ${name}.` };
      const step = messages.slice(i + 1).filter((x) => x.role === "assistant").length;
      return replies[step] ?? { content: `(${name}: script ended after ${replies.length} replies)` };
    }
    return { content: "No [e2e:…] tag in the conversation." };
  };
}

/** A valid 8×8 PNG, solid blue (IHDR 8×8 RGB, one zlib IDAT of filter-0 rows, IEND; checked with Python's zlib/struct). */
export function tinyPng(): Buffer {
  return Buffer.from(
    "iVBORw0KGgoAAAANSUhEUgAAAAgAAAAICAIAAABLbSncAAAAEUlEQVR4nGOQizqBFTEMLQkAGBlQATpZBa0AAAAASUVORK5CYII=",
    "base64",
  );
}
