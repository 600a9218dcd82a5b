/**
 * CLI argument handling shared by the subcommands. A usage error exits 2 with a message on stderr
 * (the CLI contract), and is raised as UsageError so subcommands never call process.exit; cli.ts
 * prints its message and one line pointing to the command's --help (never the whole manual).
 */
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { existsSync, realpathSync, statSync } from "node:fs";
import { HarnessError } from "../errors.js";

export interface UsageErrorOptions {
  /**
   * The command whose `--help` the error's second line points to ("mcp list"; "" = the list of
   * commands); null: no second line, the message itself names what to fix (a bad configuration
   * file, an unknown model). Default: the command cli.ts dispatched to.
   */
  help?: string | null;
}

export class UsageError extends HarnessError {
  readonly help: string | null | undefined;
  constructor(message: string, options: UsageErrorOptions = {}) {
    super("usage", message);
    this.name = "UsageError";
    this.help = options.help;
  }
}

/** A failure of a value the user gave (a configuration file, a model name) as a usage error: its message is the next step. */
export function valueUsageError(command: string, message: string): UsageError {
  return new UsageError(`deerflow ${command}: ${message}`, { help: null });
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse<T extends Options>(argv: string[], options: T, command: string) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(`deerflow ${command}: ${parseArgsMessage(err as Error)}`);
  }
}

/**
 * node:util parseArgs's message, short: its first sentence, lower-cased ("unknown option '--frob'",
 * "unexpected argument 'x'"); a missing value says so plainly.
 */
function parseArgsMessage(err: Error): string {
  const missing = /^Option '(-[^ ']+)[^']*' argument (missing|is ambiguous)/.exec(err.message);
  if (missing) return `option '${missing[1]}' needs a value${missing[2] === "missing" ? "" : ` (one that starts with '-' is given as ${missing[1]}=VALUE)`}`;
  const first = (err.message.split("\n")[0] ?? "").split(/\.(?:\s|$)/)[0] ?? "";
  return first.charAt(0).toLowerCase() + first.slice(1);
}

export function requireString(v: unknown, flag: string, command: string): string {
  if (typeof v !== "string" || v.length === 0) throw new UsageError(`deerflow ${command}: ${flag} is required`);
  return v;
}

/** The workspace folder must exist and be a directory; returned as its real path. */
export function workspaceArg(v: unknown, command: string): string {
  const dir = requireString(v, "--workspace DIR", command);
  if (!existsSync(dir) || !statSync(dir).isDirectory()) {
    throw new UsageError(`deerflow ${command}: --workspace ${dir} is not a directory`);
  }
  return realpathSync(dir);
}

/** Print one JSON object per line. */
export function writeJsonLine(obj: unknown): void {
  process.stdout.write(`${JSON.stringify(obj)}\n`);
}
