/**
 * DeerFlow's `tools:` list, as far as the port has tools to configure there (issue 35).
 *
 * In DeerFlow every tool, the sandbox's included, is an entry `{name, group, use, …}`. Here the
 * sandbox tools, present_files, view_image and the rest are always the port's own, so their
 * entries are accepted and need nothing. The one entry that changes what a run has is
 * `name: web_fetch`: with it the run is offered `web_fetch` (tools/webFetch.ts), whatever its
 * `use:` names (every DeerFlow provider is served by the port's own guarded fetch); without it
 * there is no web_fetch. Its keys: DeerFlow's `timeout` (seconds; Browserless's `timeout_s` too)
 * and `allow_private_addresses`, and the port's `max_bytes` (the download cap). Every other entry
 * and key is listed as not supported here, never fatal.
 */
import { z } from "zod";
import type { WebFetchSettings } from "../tools/webFetch.js";

type Obj = Record<string, unknown>;
// Not deerflowKeys.ts's isObj: that module imports this one.
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

export const WebFetchConfigZ = z.strictObject({
  timeout: z.number().positive().max(600).default(10),
  max_bytes: z.number().int().min(1024).max(50 * 1024 * 1024).default(2 * 1024 * 1024),
  allow_private_addresses: z.boolean().default(false),
});
export type WebFetchConfig = z.infer<typeof WebFetchConfigZ>;

/** DeerFlow tool names the port always has (its own tools, whatever the entry says). */
const BUILT_IN = new Set([
  "bash", "ls", "read_file", "write_file", "str_replace", "glob", "grep", "present_files", "present_file", "view_image",
  "ask_clarification", "write_todos", "task", "tool_search", "describe_skill",
]);
const WEB_FETCH_KEYS = new Set(["name", "group", "use", "timeout", "timeout_s", "max_bytes", "allow_private_addresses"]);

/**
 * `config.tools` → `config.web_fetch` (the entry's keys the schema checks); other entries and
 * keys into `unsupported`. Called by deerflowKeys.ts fromDeerFlow.
 */
export function mapToolsSection(config: Obj, unsupported: string[]): void {
  const tools = config.tools;
  delete config.tools;
  if (!Array.isArray(tools)) {
    if (tools !== undefined) unsupported.push("tools (a list of {name, use, …} entries)");
    return;
  }
  for (const entry of tools) {
    const name = isObj(entry) && typeof entry.name === "string" ? entry.name : undefined;
    if (name === undefined) {
      unsupported.push("tools[?] (an entry without a name)");
      continue;
    }
    if (BUILT_IN.has(name)) continue;
    if (name !== "web_fetch" || !isObj(entry)) {
      unsupported.push(`tools[${name}]`);
      continue;
    }
    const out: Obj = {};
    for (const [k, v] of Object.entries(entry)) {
      if (!WEB_FETCH_KEYS.has(k)) {
        if (v !== null && v !== undefined) unsupported.push(`tools[web_fetch].${k}`);
      } else if (k === "timeout" || k === "timeout_s") {
        if (v !== null && out.timeout === undefined) out.timeout = typeof v === "string" && v.trim() !== "" && !Number.isNaN(Number(v)) ? Number(v) : v;
      } else if (k !== "name" && k !== "group" && k !== "use" && v !== null) out[k] = v;
    }
    // Only one web_fetch provider can be active at a time (DeerFlow's config.example.yaml): the first wins.
    if (config.web_fetch === undefined) config.web_fetch = out;
    else unsupported.push("tools[web_fetch] (a second entry; the first one is used)");
  }
}

/** The run's web_fetch, when the configuration has the entry. */
export function webFetchSettings(c: WebFetchConfig | undefined): WebFetchSettings | undefined {
  if (!c) return undefined;
  return { timeoutMs: c.timeout * 1000, maxBytes: c.max_bytes, allowPrivateAddresses: c.allow_private_addresses };
}
