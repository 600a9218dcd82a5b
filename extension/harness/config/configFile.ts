/**
 * The configuration file on disk: which one, how it is read, and DeerFlow's `$VAR` values.
 *
 * Which file: the one `DEERFLOW_CONFIG` names (or DeerFlow's own `DEER_FLOW_CONFIG_PATH`), else
 * `<data-dir>/config.yaml` (DeerFlow's name; `.yml` too), else `<data-dir>/config.json` (the
 * format this project started with). A YAML file is read as PyYAML's `safe_load` reads DeerFlow's:
 * YAML 1.1, no custom tags, aliases bounded (the `yaml` package's defaults). A `.json` file is JSON.
 * A file that does not parse is a usage error naming the file, the line and the column.
 *
 * `$VAR`: as DeerFlow's `AppConfig.resolve_env_variables`, a string value that is exactly `$NAME`
 * is replaced by the environment variable NAME, and a missing variable is an error naming the key.
 * One exception, on purpose: `models[].api_key: $NAME` is not resolved here. It names the key
 * (the model's `api_key_env`), which is read from the environment, or from the extension's
 * secret storage, only when a request is made (config/deerflowKeys.ts): the key itself never
 * becomes part of the configuration, so nothing that holds the configuration can leak it.
 */
import { existsSync, readFileSync } from "node:fs";
import { extname, join } from "node:path";
import { LineCounter, parseDocument } from "yaml";
import { HarnessError } from "../errors.js";

/** A parsed configuration file: its data, and where a value of it is written. */
export interface ConfigFile {
  file: string;
  data: unknown;
  /** The 1-based line of the value at `path` (or of its nearest ancestor that is in the file). */
  lineOf(path: ReadonlyArray<string | number>): number | undefined;
}

/** The file this data directory's configuration comes from; undefined when there is none. */
export function configFilePath(dataDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const named = env.DEERFLOW_CONFIG || env.DEER_FLOW_CONFIG_PATH;
  if (named) {
    const which = env.DEERFLOW_CONFIG ? "DEERFLOW_CONFIG" : "DEER_FLOW_CONFIG_PATH";
    if (!existsSync(named)) throw new HarnessError("usage", `${which} names a file that does not exist: ${named}`);
    return named;
  }
  return ["config.yaml", "config.yml", "config.json"].map((f) => join(dataDir, f)).find((f) => existsSync(f));
}

/** Files in the data directory that lose to the one used (a config.json beside a config.yaml). */
export function shadowedConfigFiles(dataDir: string, used: string, env: NodeJS.ProcessEnv = process.env): string[] {
  if (env.DEERFLOW_CONFIG || env.DEER_FLOW_CONFIG_PATH) return [];
  return ["config.yaml", "config.yml", "config.json"].map((f) => join(dataDir, f)).filter((f) => f !== used && existsSync(f));
}

function usage(file: string, line: number | undefined, message: string): HarnessError {
  return new HarnessError("usage", `Invalid DeerFlow configuration ${file}${line ? `:${line}` : ""}: ${message}`);
}

/** Read and parse `file` (YAML unless it ends in .json); `$VAR` values resolved from `env`. */
export function readConfigFile(file: string, env: NodeJS.ProcessEnv = process.env): ConfigFile {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new HarnessError("usage", `Cannot read DeerFlow configuration ${file}: ${(err as Error).message}`);
  }
  const parsed = extname(file).toLowerCase() === ".json" ? parseJson(file, text) : parseYaml(file, text);
  return { file, data: resolveEnvValues(parsed.data, env, (path, line) => line ?? parsed.lineOf(path), file), lineOf: parsed.lineOf };
}

function parseYaml(file: string, text: string): Omit<ConfigFile, "file"> {
  const lines = new LineCounter();
  // PyYAML's safe_load is YAML 1.1 (`yes`/`no`/`on`/`off` are booleans there too).
  const doc = parseDocument(text, { version: "1.1", lineCounter: lines, prettyErrors: true });
  const first = doc.errors[0];
  if (first) {
    const at = first.linePos?.[0];
    const what = first.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, "");
    throw usage(file, at?.line, `${at ? `column ${at.col}: ` : ""}${what}`);
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: 100 }) ?? {};
  } catch (err) {
    throw usage(file, undefined, (err as Error).message);
  }
  const lineOf = (path: ReadonlyArray<string | number>): number | undefined => {
    for (let n = path.length; n > 0; n--) {
      const node = doc.getIn(path.slice(0, n), true) as { range?: [number, number, number] } | undefined;
      if (node && typeof node === "object" && Array.isArray(node.range)) return lines.linePos(node.range[0]).line;
      // A key whose value is empty (`models:` with only comments under it) has no node: its key has.
      const parent = n > 1 ? doc.getIn(path.slice(0, n - 1), true) : doc.contents;
      const pair = (parent as { items?: Array<{ key?: { value?: unknown; range?: [number, number, number] } }> } | null)?.items?.find((p) => p.key?.value === path[n - 1]);
      if (pair?.key?.range) return lines.linePos(pair.key.range[0]).line;
    }
    return undefined;
  };
  return { data, lineOf };
}

function parseJson(file: string, text: string): Omit<ConfigFile, "file"> {
  try {
    return { data: JSON.parse(text) as unknown, lineOf: () => undefined };
  } catch (err) {
    const message = (err as Error).message;
    // V8 names the offset ("… in JSON at position 42 …"); the line is what a person looks for.
    const pos = /position (\d+)/.exec(message);
    const line = pos ? text.slice(0, Number(pos[1])).split("\n").length : undefined;
    throw usage(file, line, message);
  }
}

const WHOLE_VAR = /^\$([A-Za-z_][A-Za-z0-9_]*)$/;

/** The environment variable a value names (`$NAME`), or undefined. */
export function envReference(value: unknown): string | undefined {
  return typeof value === "string" ? WHOLE_VAR.exec(value)?.[1] : undefined;
}

/** Whether `path` is a model's `api_key`: named, never resolved (see the header). */
function isModelKey(path: ReadonlyArray<string | number>): boolean {
  return path.length === 3 && path[0] === "models" && typeof path[1] === "number" && path[2] === "api_key";
}

function resolveEnvValues(
  value: unknown,
  env: NodeJS.ProcessEnv,
  lineOf: (path: ReadonlyArray<string | number>, line?: number) => number | undefined,
  file: string,
  path: Array<string | number> = [],
): unknown {
  const name = envReference(value);
  if (name !== undefined && !isModelKey(path)) {
    const resolved = env[name];
    if (resolved === undefined) throw usage(file, lineOf(path), `${dotted(path)}: the environment variable ${name} is not set (the value is $${name})`);
    return resolved;
  }
  if (Array.isArray(value)) return value.map((v, i) => resolveEnvValues(v, env, lineOf, file, [...path, i]));
  if (value && typeof value === "object") {
    return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, resolveEnvValues(v, env, lineOf, file, [...path, k])]));
  }
  return value;
}

/** `models[0].base_url` for ["models", 0, "base_url"]. */
export function dotted(path: ReadonlyArray<string | number>): string {
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? p : `.${p}`)).join("") || "(root)";
}
