#!/usr/bin/env node
/**
 * `deerflow`: the harness, headless. The same code the VS Code extension runs in its harness
 * process, driven from a command line for scripts, CI and tests. Its flags and its JSON Lines
 * output are a contract (docs/cli.md). The commands, their help and their handlers are the table
 * in cli/commands.ts; this file dispatches from it and turns errors into exit codes.
 */
import { UsageError } from "./cli/args.js";
import { findCommand, findSubcommand, unknownCommand, unknownSubcommand, usageText } from "./cli/commands.js";
import { HarnessError } from "./errors.js";

/** `--help`/`-h` anywhere before a `--` asks for help, whatever else the arguments say. */
function asksForHelp(args: string[]): boolean {
  const end = args.indexOf("--");
  return (end < 0 ? args : args.slice(0, end)).some((a) => a === "--help" || a === "-h");
}

/** The command a usage error's "Run 'deerflow … --help'" line points to: the one dispatched to. */
let dispatched = "";

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) throw new UsageError("deerflow: no command given", { help: "" });
  if (name === "--help" || name === "-h") return findCommand("help")!.run([]);
  if (name === "--version" || name === "-V") return findCommand("version")!.run([]);
  const command = findCommand(name);
  if (!command) throw unknownCommand(name);
  const sub = findSubcommand(command, rest[0]);
  dispatched = sub ? `${command.name} ${sub.name}` : command.name;
  // `help` reads its own arguments (deerflow help run --help is run's usage).
  if (command.name !== "help" && asksForHelp(rest)) {
    process.stdout.write(usageText(command, sub));
    return 0;
  }
  if (command.subcommands && !sub) throw unknownSubcommand(command, rest[0]);
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      // One or two lines, never the manual: what is wrong, then where the usage is.
      const help = err.help === undefined ? dispatched : err.help;
      const hint = help === null ? "" : help ? `Run 'deerflow ${help} --help' for usage.\n` : "Run 'deerflow --help' for the list of commands.\n";
      process.stderr.write(`${err.message}\n${hint}`);
      process.exitCode = 2;
    } else {
      // A HarnessError is a known failure with a message written for the user; anything else is
      // a bug, and its stack helps whoever reports it.
      const text = err instanceof HarnessError ? err.message : err instanceof Error ? (err.stack ?? err.message) : String(err);
      process.stderr.write(`deerflow: ${text}\n`);
      process.exitCode = 1;
    }
  },
);
