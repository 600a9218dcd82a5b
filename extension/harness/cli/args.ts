/**
 * CLI argument handling shared by the subcommands. A usage error exits 2 with a message on stderr
 * (the CLI contract), and is raised as UsageError so subcommands never call process.exit.
 */
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { existsSync, realpathSync, statSync } from "node:fs";
import { HarnessError } from "../errors.js";

export class UsageError extends HarnessError {
  constructor(message: string) {
    super("usage", message);
    this.name = "UsageError";
  }
}

export type Options = NonNullable<ParseArgsConfig["options"]>;

export function parse<T extends Options>(argv: string[], options: T, command: string) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (err) {
    throw new UsageError(`deerflow ${command}: ${(err as Error).message}`);
  }
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
