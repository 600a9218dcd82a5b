/**
 * Keys written literally in the configuration file (`models[].api_key: sk-…`), by their source
 * name (`config-file:<model>`, which the model's `api_key_env` then holds). They are kept here, in
 * this process's memory only, so the configuration object (parsed, compared, passed around) never
 * holds a key; createChatModel (./factory.ts) is the one reader. Set when a configuration file is
 * loaded (config/harnessConfig.ts loadConfigFile). A key named `$NAME` in the file is not here:
 * it is read from the environment (or the extension's secret storage) by name.
 */
const fileKeys = new Map<string, string>();

export function setFileKeys(keys: ReadonlyMap<string, string>): void {
  fileKeys.clear();
  for (const [source, key] of keys) fileKeys.set(source, key);
}

/** The key a source names: a file's literal key, else the environment variable of that name. */
export function keyFromSource(source: string, env: NodeJS.ProcessEnv): string | undefined {
  return fileKeys.get(source) ?? env[source];
}
