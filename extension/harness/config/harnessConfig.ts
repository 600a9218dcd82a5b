/**
 * Harness configuration: the models the user configured, and sandbox policy.
 *
 * The extension passes its `deerflow.*` settings; the CLI reads `<data-dir>/config.json` (or the
 * file named by DEERFLOW_CONFIG). The file lives outside the workspace on purpose: the sandbox can
 * write the workspace, and a config there could point a model (and its API key) at any endpoint.
 * API keys are never part of this config: they come from the environment (or SecretStorage
 * through the host) by name.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { HarnessError } from "../errors.js";

export const ModelConfigZ = z.object({
  /** The name users pick (`--model NAME`, the model picker). */
  name: z.string().min(1),
  /** The provider's model id sent in requests. */
  model: z.string().min(1),
  /** OpenAI-compatible base URL; defaults to OPENAI_BASE_URL, then the OpenAI API. */
  base_url: z.string().url().optional(),
  /** Name of the environment variable holding this model's key; defaults to OPENAI_API_KEY. */
  api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  display_name: z.string().optional(),
  supports_vision: z.boolean().default(false),
  supports_thinking: z.boolean().default(false),
  max_tokens: z.number().int().positive().optional(),
  temperature: z.number().min(0).max(2).optional(),
});
export type ModelConfig = z.infer<typeof ModelConfigZ>;

export const HarnessConfigZ = z.object({
  models: z.array(ModelConfigZ).default([]),
  default_model: z.string().optional(),
  title_model: z.string().optional(),
  sandbox: z
    .object({
      provider: z.enum(["auto", "local", "devcontainer"]).default("auto"),
      allow_host_commands: z.boolean().default(false),
      bash_timeout_seconds: z.number().positive().default(600),
    })
    .default({ provider: "auto", allow_host_commands: false, bash_timeout_seconds: 600 }),
});
export type HarnessConfig = z.infer<typeof HarnessConfigZ>;

export function parseHarnessConfig(raw: unknown, source: string): HarnessConfig {
  const parsed = HarnessConfigZ.safeParse(raw);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
    throw new HarnessError("usage", `Invalid DeerFlow configuration in ${source}: ${issues}`);
  }
  const names = new Set<string>();
  for (const m of parsed.data.models) {
    if (names.has(m.name)) throw new HarnessError("usage", `Invalid DeerFlow configuration in ${source}: model name "${m.name}" is configured twice`);
    names.add(m.name);
  }
  return parsed.data;
}

/** Load the CLI's configuration: DEERFLOW_CONFIG, else `<dataDir>/config.json`, else defaults. */
export function loadHarnessConfig(dataDir: string, env: NodeJS.ProcessEnv = process.env): HarnessConfig {
  const file = env.DEERFLOW_CONFIG || join(dataDir, "config.json");
  if (!existsSync(file)) {
    if (env.DEERFLOW_CONFIG) throw new HarnessError("usage", `DEERFLOW_CONFIG names a file that does not exist: ${file}`);
    return parseHarnessConfig({}, "defaults");
  }
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new HarnessError("usage", `Cannot read DeerFlow configuration ${file}: ${(err as Error).message}`);
  }
  return parseHarnessConfig(raw, file);
}
