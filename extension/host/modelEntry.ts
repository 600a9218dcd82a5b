/**
 * The settings entry Add Model writes (issue 30 item 1), and what its input boxes accept. Pure:
 * no vscode import, so the rules are unit-tested (test/unit/host/modelEntry.test.ts).
 */
import type { ModelSetting } from "../protocol/rpc.js";

export const OPENAI_BASE_URL = "https://api.openai.com/v1";

/** An http(s) URL, or why not (the input box's validation message). */
export function baseUrlProblem(value: string): string | undefined {
  const v = value.trim();
  if (!v) return "The base URL of an OpenAI-compatible endpoint, e.g. https://api.openai.com/v1 or http://127.0.0.1:11434/v1";
  try {
    const u = new URL(v);
    if (u.protocol !== "http:" && u.protocol !== "https:") return "An http:// or https:// URL";
    if (u.username || u.password) return "Leave the key out of the URL: the next box asks for it";
    return undefined;
  } catch {
    return "Not a URL: e.g. https://api.openai.com/v1";
  }
}

/**
 * The settings entry for a model id at a base URL: named after the model id (made unique among
 * `existing` with " (2)", " (3)", …), with its own key name derived from that name so two
 * endpoints never share a key (`DEERFLOW_<NAME>_API_KEY`).
 */
export function newModelEntry(baseUrl: string, modelId: string, existing: readonly { name: string }[]): ModelSetting {
  const id = modelId.trim();
  const names = new Set(existing.map((m) => m.name));
  let name = id;
  for (let i = 2; names.has(name); i++) name = `${id} (${i})`;
  const slug = name.toUpperCase().replace(/[^A-Z0-9]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 48) || "MODEL";
  return { name, model: id, base_url: baseUrl.trim().replace(/\/+$/, ""), api_key_env: `DEERFLOW_${slug}_API_KEY` };
}

/** `url` names this machine (localhost, 127.0.0.1, ::1); false for no URL or not a URL. */
export function isLoopbackUrl(url: string | undefined): boolean {
  if (!url) return false;
  try {
    const host = new URL(url).hostname;
    return host === "localhost" || host === "127.0.0.1" || host === "[::1]" || host === "::1";
  } catch {
    return false;
  }
}
