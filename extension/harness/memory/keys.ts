/**
 * Which API key the memory extraction model gets: the one rule, used by the CLI (cli/memory.ts)
 * and the harness server (server/memory.ts).
 * - The run's own key (`--api-key`, given for that run) goes to that same model on the same
 *   endpoint only.
 * - An ad-hoc model (a queue entry a `run --base-url X` wrote: the endpoint came from the command
 *   line, not from the configuration) gets no held key: the host's key for `OPENAI_API_KEY` must
 *   never be sent to an endpoint the user typed for one invocation. (undefined → createChatModel
 *   reads the environment, as the CLI run that queued it did.)
 * - A configured model gets the key held for its own `api_key_env` (the server's session keys),
 *   or none (→ the environment: the CLI).
 */
import type { ResolvedModel } from "../models/factory.js";

export interface RunKey {
  name: string;
  baseURL: string | undefined;
  key: string;
}

export function memoryKeyFor(model: ResolvedModel, opts: { runKey?: RunKey; held?: (apiKeySource: string) => string | undefined }): string | undefined {
  const { runKey, held } = opts;
  if (runKey && runKey.name === model.name && runKey.baseURL === model.baseURL) return runKey.key;
  if (model.adHoc) return undefined;
  return held?.(model.apiKeySource);
}
