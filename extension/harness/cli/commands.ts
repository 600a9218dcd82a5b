/**
 * The `deerflow` command table: every command's name, one-line summary, usage (synopsis and the
 * paragraphs that explain it), sub-commands and handler. cli.ts dispatches from it, and the help
 * (`deerflow --help`, `deerflow help CMD`, `deerflow CMD [SUB] --help`) is rendered from it here:
 * a command's usage is written once, next to its handler.
 */
import { approveCommand, runCommand } from "./run.js";
import { stateCommand, threadsCommand } from "./state.js";
import { cancelCommand, eventsCommand, runsCommand } from "./runs.js";
import { devcontainerCommand } from "./devcontainer.js";
import { deleteCommand } from "./delete.js";
import { changesCommand, revertCommand } from "./changes.js";
import { compactCommand } from "./compact.js";
import { memoryCommand } from "./memory.js";
import { skillsCommand } from "./skills.js";
import { mcpCommand } from "./mcp.js";
import { configCommand } from "./configCheck.js";
import { serveCommand } from "../serve/command.js";
import { HARNESS_VERSION } from "../version.js";
import { UsageError } from "./args.js";

export type Handler = (argv: string[]) => number | Promise<number>;

export interface SubcommandSpec {
  name: string;
  summary: string;
  /** Its synopsis: lines starting with `deerflow CMD SUB`. */
  synopsis: string;
  /** Paragraphs about this sub-command alone (the command's own paragraphs follow them). */
  details?: string[];
}

export interface CommandSpec {
  name: string;
  summary: string;
  /** Lines starting with `deerflow CMD`; a command with sub-commands shows theirs instead. */
  synopsis?: string;
  /** Paragraphs, wrapped when printed. */
  details?: string[];
  /** Sub-commands: the first argument names one, and the handler gets it with the rest. */
  subcommands?: SubcommandSpec[];
  /** Receives the arguments after the command's name (the sub-command's name included). */
  run: Handler;
}

const WIDTH = 80;

const CONFIG_PARAGRAPH =
  "Configuration: DeerFlow's config.yaml in the data dir (or config.json, or the file DEERFLOW_CONFIG names), DeerFlow's keys; $NAME values come from the environment. Keys this port does not implement are listed once on stderr; a malformed file is a usage error (exit 2) naming its line.";

export const COMMANDS: CommandSpec[] = [
  {
    name: "run",
    summary: "Run one turn of the agent on a thread and print it as it goes",
    synopsis: `deerflow run --workspace DIR (--prompt TEXT | --upload FILE) [--thread ID] [--upload FILE]... [--model NAME]
             [--base-url URL] [--api-key-stdin] [--plan-mode] [--allow-host-commands]
             [--timeout SECONDS] [--idempotency-key K] [--multitask reject|interrupt]
             [--sandbox auto|local|devcontainer] [--approval CLASS=MODE,...] [--subagents]
             [--max-tokens N] [--max-turns N] [--no-memory] [--json] [--data-dir DIR]`,
    details: [
      "Creates the thread when --thread is absent (or names a new id) and runs one turn. On a terminal it prints the answer as it streams, a line per tool call (✓ done, ✗ failed, ⊘ rejected), the calls that wait on your decision with the deerflow approve line that decides them, and how the run ended. When stdout is not a terminal, or with --json, it prints every event as a JSON Line instead; the last line is the `end` event. Exit 0 on success, 1 on any other final status, 2 on a usage error (nothing is run).",
      '--max-turns caps the model turns (model requests) of the run (config key max_turns, default 200): at N the run ends "success" with stop_reason "turn_capped", every tool call answered; a next run on the thread continues.',
      '--max-tokens caps the run\'s tokens (input + output, subagents included; config token_budget: enabled, max_tokens, max_input/output_tokens, thresholds; 0 = none): at the cap the answer\'s tool calls are dropped and the run ends with stop_reason "token_capped".',
      "The end event's data.usage has input, output, total, cached and reasoning tokens, the same by model (by_model) and an estimated cost (null when a model's price is unknown).",
      "--subagents gives the run the task tool (subagents general-purpose and bash, and the config's subagents.custom_agents; config key subagents.enabled); their events carry data.task_id.",
      '--approval sets what runs without asking, per tool class (read, write, protected, shell, mcp, web, other) as auto, ask or deny; defaults: read=auto, write=auto, protected=ask, shell=ask on the host (auto in a dev container), mcp=ask, web=ask, other=ask. A call that asks pauses the run (stop_reason "approval"). A thread waiting on approval refuses a new run unless --multitask interrupt, which rejects the pending calls first.',
      "The API key comes from the environment (OPENAI_API_KEY or the model's api_key_env) or from stdin with --api-key-stdin. --api-key KEY still works but shows the key to other processes (ps), and says so on stderr.",
      "--no-memory (or config memory.enabled false): no long-term memory injection, no extraction.",
    ],
    run: runCommand,
  },
  {
    name: "approve",
    summary: "Decide the tool calls a paused run waits on, then continue the run",
    synopsis: `deerflow approve --workspace DIR --thread ID (--all approve|reject | [--approve CALL_ID]...
                 [--reject CALL_ID]...) [--reason TEXT] [--always-allow TOOL]... [--json] [--data-dir DIR]`,
    details: [
      'Decides every tool call the thread waits on, then continues the run and streams like run (same output, same exit codes). Rejected calls answer the model "Rejected by the user: <reason>". Takes run\'s model, sandbox, --max-turns and --approval flags; without them it continues with the paused run\'s model and host-command setting. A yes covers the call it names once.',
      "The continued run keeps the approval policy the paused run had (a write=ask given to run still asks for the next write): per class the stricter of that and the configuration. Only a class named in approve's own --approval takes the new mode (e.g. --approval write=auto).",
      "--always-allow TOOL also keeps the card's rule for this thread: bash commands whose every sub-command starts with the card's prefix, in the same sandbox kind; other tools' calls of the same class; never a protected write.",
    ],
    run: approveCommand,
  },
  {
    name: "state",
    summary: "Print a thread's state (messages, artifacts, todos, usage) as JSON",
    synopsis: "deerflow state --workspace DIR --thread ID [--data-dir DIR]",
    details: ['The thread\'s state as one JSON object, with "usage": the sum over its runs (and the last run\'s).'],
    run: stateCommand,
  },
  {
    name: "threads",
    summary: "List the workspace's threads",
    synopsis: "deerflow threads --workspace DIR [--data-dir DIR]",
    details: ["One JSON line per thread: thread_id, title, created_at, updated_at."],
    run: threadsCommand,
  },
  {
    name: "compact",
    summary: "Summarize a thread's older messages now",
    synopsis: "deerflow compact --workspace DIR --thread ID [--model NAME] [--base-url URL] [--no-memory] [--data-dir DIR]",
    details: [
      "Summarizes the thread's older messages now (config key summarization): the model then sees the summary and the last messages; state still lists every message. Prints the summary as one JSON line. Exit 1 with the reason when the summary model fails or a run is active on the thread.",
    ],
    run: compactCommand,
  },
  {
    name: "events",
    summary: "Print a thread's journaled events",
    synopsis: "deerflow events --workspace DIR --thread ID [--after SEQ] [--data-dir DIR]",
    details: ["The thread's journaled events, one JSON line each as run prints them, after sequence number SEQ (default 0: all)."],
    run: eventsCommand,
  },
  {
    name: "runs",
    summary: "List a thread's runs",
    synopsis: "deerflow runs --workspace DIR --thread ID [--data-dir DIR]",
    details: ["One JSON line per run, with its usage when it reported one."],
    run: runsCommand,
  },
  {
    name: "cancel",
    summary: "Cancel a run",
    synopsis: "deerflow cancel --workspace DIR --run ID [--data-dir DIR]",
    details: ["Cancels the run and waits until it has stopped (its end is journaled). Exit 0 when it is cancelled, 1 when it had already finished or is unknown."],
    run: cancelCommand,
  },
  {
    name: "delete",
    summary: "Delete a thread, its runs, events and files",
    synopsis: "deerflow delete --workspace DIR --thread ID [--data-dir DIR]",
    details: [
      "Removes the thread: its messages, runs, events, the viewed images no other thread uses, and its .deerflow/threads/ID folder. Refused while a run is active.",
    ],
    run: deleteCommand,
  },
  {
    name: "changes",
    summary: "List the files a run's file tools changed",
    synopsis: "deerflow changes --workspace DIR --run ID [--data-dir DIR]",
    details: [
      "The files the run's file tools (write_file, str_replace) changed, one JSON line each: path, status added|modified|deleted, before_sha256, after_sha256. What bash changed is not recorded.",
    ],
    run: changesCommand,
  },
  {
    name: "revert",
    summary: "Put the files a run changed back as they were",
    synopsis: "deerflow revert --workspace DIR --run ID [--path P]... [--allow-protected] [--data-dir DIR]",
    details: [
      "Puts the files the run's file tools changed back as they were before the run (an added file is removed). A file changed again since the run is refused and kept (exit 1), the others are reverted. Refused while a run of the thread is active.",
    ],
    run: revertCommand,
  },
  {
    name: "memory",
    summary: "Show, clear or promote long-term memory",
    subcommands: [
      {
        name: "show",
        summary: "Print the memory as JSON",
        synopsis: "deerflow memory show [--workspace DIR] [--data-dir DIR] [--database URL]",
        details: ["Prints the memory as JSON (--workspace: what that folder's threads are given)."],
      },
      {
        name: "clear",
        summary: "Empty the memory and drop queued updates",
        synopsis: "deerflow memory clear [--data-dir DIR] [--database URL]",
      },
      {
        name: "promote",
        summary: "Make a fact, or a folder's section, global",
        synopsis: "deerflow memory promote (--fact ID | --workspace DIR --section NAME) [--data-dir DIR] [--database URL]",
        details: ["Makes a fact (or a folder's section, e.g. user.workContext) global: every workspace's threads are given it."],
      },
    ],
    details: [
      'Long-term memory (one per data directory): after a run, the user\'s messages and the final answers not yet extracted are queued for fact extraction by the model (the run\'s, or memory.model_name), done before the CLI exits ("memory: updated (N facts)" on stderr). A thread\'s first request carries it as a hidden <memory> block. What is learnt in a workspace is given only to that workspace\'s threads; entries that read as instructions or permissions are not stored.',
      '--database URL: the memory a "serve --database URL" keeps in that Postgres database. run --no-memory (or config memory.enabled false): no injection, no extraction.',
    ],
    run: memoryCommand,
  },
  {
    name: "skills",
    summary: "List, enable or disable Agent Skills",
    subcommands: [
      {
        name: "list",
        summary: "List the workspace's skills",
        synopsis: "deerflow skills list --workspace DIR [--data-dir DIR]",
        details: ["One JSON line per skill (name, scope, path, location, enabled, status loaded|broken|shadowed, diagnostics)."],
      },
      {
        name: "enable",
        summary: "Enable a skill",
        synopsis: "deerflow skills enable NAME --workspace DIR [--data-dir DIR]",
        details: ["Sets DeerFlow's skills.NAME.enabled in <data-dir>/extensions_config.json."],
      },
      {
        name: "disable",
        summary: "Disable a skill",
        synopsis: "deerflow skills disable NAME --workspace DIR [--data-dir DIR]",
        details: ["Sets DeerFlow's skills.NAME.enabled to false in <data-dir>/extensions_config.json."],
      },
    ],
    details: [
      "Agent Skills: every folder with a SKILL.md in the workspace's .deerflow/skills, .agents/skills, .github/skills, .claude/skills, then <data-dir>/skills, ~/.agents/skills, ~/.claude/skills and config skills.path (custom/, public/); the first of a name wins. A run offers the enabled ones at /mnt/skills/<scope>/<folder> (read-only); a prompt starting with /NAME activates that skill.",
    ],
    run: skillsCommand,
  },
  {
    name: "mcp",
    summary: "List or approve the workspace's MCP servers",
    subcommands: [
      {
        name: "list",
        summary: "Start the MCP servers and print each with its state and tools",
        synopsis: "deerflow mcp list --workspace DIR [--no-start] [--sandbox auto|local|devcontainer] [--data-dir DIR]",
        details: [
          "Starts the servers (stdio ones where the sandbox is: inside an approved dev container) and prints each with its state, tools or reason, one JSON line per server. --no-start lists them without starting any.",
        ],
      },
      {
        name: "approve",
        summary: "Approve the workspace's MCP servers as they are now",
        synopsis: "deerflow mcp approve --workspace DIR [--server NAME [--fingerprint SHA]] [--data-dir DIR]",
        details: [
          "Records your yes to the folder's workspace servers as they are now, by fingerprint: every one waiting for approval, or --server NAME (with --fingerprint SHA, only if it still has that fingerprint). Prints one JSON line per approved server.",
        ],
      },
    ],
    details: [
      "MCP servers: DeerFlow's extensions_config.json in the data dir (yours: they start as configured), the folder's .deerflow/extensions_config.json and .vscode/mcp.json (the workspace's: each starts only once approved as it is now; an edit asks again). Their tools (<server>_<tool>) join every run; a call asks by default (--approval mcp=auto|ask|deny). tool_search.enabled (or more than tool_search.auto_threshold MCP tools) defers them behind tool_search.",
    ],
    run: mcpCommand,
  },
  {
    name: "devcontainer",
    summary: "Approve a folder's dev container configuration, or show whether it is approved",
    subcommands: [
      {
        name: "approve",
        summary: "Approve the dev container configuration as it is now",
        synopsis: "deerflow devcontainer approve --workspace DIR [--data-dir DIR] [--fingerprint SHA]",
        details: [
          "Prints what it approves, including the commands that run on this machine, and records it. --fingerprint SHA approves only if the configuration still has that fingerprint.",
        ],
      },
      {
        name: "status",
        summary: "Show the configuration and whether it is approved",
        synopsis: "deerflow devcontainer status --workspace DIR [--data-dir DIR]",
        details: ["Prints the same as approve; exit 0 when it is approved, 1 when not."],
      },
    ],
    details: [
      "A folder's dev container is brought up only with a configuration you approved (devcontainer.json, its Dockerfile/compose files, local features, the scripts its initializeCommand names).",
    ],
    run: devcontainerCommand,
  },
  {
    name: "config",
    summary: "Check the configuration file without running anything",
    subcommands: [
      {
        name: "check",
        summary: "List the configuration's unsupported keys and bad values",
        synopsis: "deerflow config check [--data-dir DIR]",
        details: ["Reads the configuration as a run would and prints {config, unsupported} as one JSON line; the keys this port does not act on go to stderr. Exit 1: a bad value (the message names the file and line)."],
      },
    ],
    details: [CONFIG_PARAGRAPH],
    run: configCommand,
  },
  {
    name: "serve",
    summary: "Serve DeerFlow's LangGraph-compatible HTTP API (and VS Code's remote harness)",
    synopsis: `deerflow serve --workspace [NAME=]DIR... [--data-dir DIR] [--database URL|sqlite] [--port N]
               [--host H] [--token-file F] [--model NAME] [--base-url URL] [--sandbox CHOICE]
               [--allow-origin ORIGIN]...`,
    details: [
      "DeerFlow's LangGraph-compatible HTTP API (threads, runs, runs/stream, join, cancel, state, history) for @langchain/langgraph-sdk clients. Bearer token from --token-file (or generated and printed once on stderr); 127.0.0.1:2024 unless --host/--port say otherwise.",
      "--database postgres://… (or config database: {backend: postgres, postgres_url: $DATABASE_URL}) shares one Postgres between several serve processes; the default is the data dir's SQLite.",
      "VS Code uses it as its harness through ws://HOST:PORT/rpc (deerflow.harness.url).",
      "Browsers: a request with an Origin header must come from serve's own origin (its Host, or a proxy's X-Forwarded-Proto/X-Forwarded-Host or Forwarded) or an --allow-origin ORIGIN (scheme://host[:port], repeatable), else 403; the /rpc upgrade too. Host must be a name of the bound address (127.0.0.1, localhost, [::1] on loopback; every interface's address and the host name on 0.0.0.0) or an --allow-origin host, so a DNS-rebinding page gets a 403: behind a proxy that passes its own host name, give that as --allow-origin https://NAME.",
      "At most 64 event streams (runs/stream, …/runs/ID/stream) at a time per token; more get 429 until one closes.",
    ],
    run: serveCommand,
  },
  {
    name: "help",
    summary: "Show this overview, or a command's usage (deerflow help COMMAND [SUB])",
    synopsis: "deerflow help [COMMAND [SUBCOMMAND]]",
    details: ["Without a command: the list of commands. With one: that command's usage, as deerflow COMMAND --help prints it."],
    run: helpCommand,
  },
  {
    name: "version",
    summary: "Print the version",
    synopsis: "deerflow version   (or deerflow --version, deerflow -V)",
    run: versionCommand,
  },
];

export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

export function findSubcommand(command: CommandSpec, name: string | undefined): SubcommandSpec | undefined {
  return name === undefined ? undefined : command.subcommands?.find((s) => s.name === name);
}

/** `deerflow --help`: one line per command. */
export function overviewText(): string {
  const pad = Math.max(...COMMANDS.map((c) => c.name.length)) + 2;
  return [
    `deerflow ${HARNESS_VERSION}: DeerFlow's agent harness from the command line.`,
    "",
    "Usage: deerflow <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(pad)}${c.summary}`),
    "",
    "Run 'deerflow <command> --help' for a command's options.",
    "Configuration: config.yaml in the data directory (see 'deerflow config --help').",
    "",
  ].join("\n");
}

/** `deerflow CMD --help` / `deerflow CMD SUB --help`: that command's usage only. */
export function usageText(command: CommandSpec, sub?: SubcommandSpec): string {
  const synopsis = sub ? [sub.synopsis] : command.synopsis ? [command.synopsis] : (command.subcommands ?? []).map((s) => s.synopsis);
  const paragraphs = [...(sub?.details ?? []), ...(command.details ?? [])];
  const lines = ["Usage:", ...synopsis.flatMap((s) => s.split("\n").map((l) => `  ${l}`))];
  for (const p of paragraphs) lines.push("", ...wrap(p, WIDTH));
  if (!sub && command.subcommands) {
    const pad = Math.max(...command.subcommands.map((s) => s.name.length)) + 2;
    lines.push("", "Sub-commands:", ...command.subcommands.map((s) => `  ${s.name.padEnd(pad)}${s.summary}`));
    lines.push("", `Run 'deerflow ${command.name} <sub-command> --help' for its options.`);
  }
  return `${lines.join("\n")}\n`;
}

/** The words of a paragraph in lines of at most `width` characters (a longer word keeps its own line). */
function wrap(paragraph: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of paragraph.split(/\s+/).filter(Boolean)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/** The `help` command: its arguments name the command (and sub-command) whose usage to print. */
function helpCommand(argv: string[]): number {
  const [name, subName] = argv.filter((a) => a !== "--help" && a !== "-h");
  if (name === undefined) {
    process.stdout.write(overviewText());
    return 0;
  }
  const command = findCommand(name);
  if (!command) throw unknownCommand(name);
  const sub = findSubcommand(command, subName);
  if (subName !== undefined && !sub) throw unknownSubcommand(command, subName);
  process.stdout.write(usageText(command, sub));
  return 0;
}

function versionCommand(): number {
  process.stdout.write(`deerflow ${HARNESS_VERSION}\n`);
  return 0;
}

export function unknownCommand(name: string): UsageError {
  return new UsageError(`deerflow: unknown command "${name}"`, { help: "" });
}

export function unknownSubcommand(command: CommandSpec, name: string | undefined): UsageError {
  const names = (command.subcommands ?? []).map((s) => s.name);
  const choice = `${names.slice(0, -1).join(", ")}${names.length > 1 ? " or " : ""}${names.at(-1)}`;
  const what = name === undefined || name.startsWith("-") ? `name a sub-command: ${choice}` : `unknown sub-command "${name}" (use ${choice})`;
  return new UsageError(`deerflow ${command.name}: ${what}`, { help: command.name });
}
