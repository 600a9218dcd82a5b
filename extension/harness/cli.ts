#!/usr/bin/env node
/**
 * `deerflow`: the harness, headless. The same code the VS Code extension runs in its harness
 * process, driven from a command line for scripts, CI and tests. Its flags and its JSON Lines
 * output are a contract (README "CLI").
 */
import { approveCommand, runCommand } from "./cli/run.js";
import { stateCommand, threadsCommand } from "./cli/state.js";
import { UsageError } from "./cli/args.js";
import { HarnessError } from "./errors.js";
import { cancelCommand, eventsCommand, runsCommand } from "./cli/runs.js";
import { devcontainerCommand } from "./cli/devcontainer.js";
import { deleteCommand } from "./cli/delete.js";
import { changesCommand, revertCommand } from "./cli/changes.js";
import { compactCommand } from "./cli/compact.js";
import { memoryCommand } from "./cli/memory.js";
import { skillsCommand } from "./cli/skills.js";
import { mcpCommand } from "./cli/mcp.js";
import { configCommand } from "./cli/configCheck.js";
import { serveCommand } from "./serve/command.js";

const USAGE = `Usage:
  deerflow run     --workspace DIR (--prompt TEXT | --upload FILE) [--thread ID] [--upload FILE]... [--model NAME]
                   [--base-url URL] [--api-key-stdin] [--plan-mode] [--allow-host-commands]
                   [--timeout SECONDS] [--idempotency-key K] [--multitask reject|interrupt]
                   [--sandbox auto|local|devcontainer] [--approval CLASS=MODE,...] [--subagents]
                   [--max-tokens N] [--max-turns N] [--no-memory] [--data-dir DIR]
                   --max-turns caps the model turns (model requests) of the run (config key
                   max_turns, default 200): at N the run ends "success" with stop_reason
                   "turn_capped", every tool call answered; a next run on the thread continues.
                   --max-tokens caps the run's tokens (input + output, subagents included; config
                   token_budget: enabled, max_tokens, max_input/output_tokens, thresholds; 0 =
                   none): at the cap the answer's tool calls are dropped and the run ends with
                   stop_reason "token_capped".
                   The end event's data.usage has input, output, total, cached and reasoning
                   tokens, the same by model (by_model) and an estimated cost (null when a
                   model's price is unknown).
                   --subagents gives the run the task tool (subagents general-purpose and bash,
                   and the config's subagents.custom_agents; config key subagents.enabled);
                   their events carry data.task_id.
                   --approval sets what runs without asking, per tool class (read, write,
                   protected, shell, mcp, web, other) as auto, ask or deny; defaults: read=auto,
                   write=auto, protected=ask, shell=ask on the host (auto in a dev container),
                   mcp=ask, web=ask, other=ask. A call that asks pauses the run (stop_reason "approval").
                   A thread waiting on approval refuses a new run unless --multitask interrupt,
                   which rejects the pending calls first.
                   The API key comes from the environment (OPENAI_API_KEY or the model's
                   api_key_env) or from stdin with --api-key-stdin. --api-key KEY still works
                   but shows the key to other processes (ps), and says so on stderr.
  deerflow approve --workspace DIR --thread ID (--all approve|reject | [--approve CALL_ID]...
                   [--reject CALL_ID]...) [--reason TEXT] [--always-allow TOOL]... [--data-dir DIR]
                   Decides every tool call the thread waits on, then continues the run and
                   streams like run (same output, same exit codes). Rejected calls answer the
                   model "Rejected by the user: <reason>". Takes run's model, sandbox,
                   --max-turns and --approval flags; without them it continues with the paused
                   run's model and host-command setting. A yes covers the call it names once.
                   --always-allow TOOL also keeps the card's rule for this thread: bash commands
                   whose every sub-command starts with the card's prefix, in the same sandbox
                   kind; other tools' calls of the same class; never a protected write.
  deerflow state   --workspace DIR --thread ID [--data-dir DIR]
                   The thread's state, with "usage": the sum over its runs (and the last run's).
  deerflow threads --workspace DIR [--data-dir DIR]
  deerflow compact --workspace DIR --thread ID [--model NAME] [--base-url URL] [--no-memory] [--data-dir DIR]
                   Summarizes the thread's older messages now (config key summarization): the
                   model then sees the summary and the last messages; state still lists every
                   message. Prints the summary as one JSON line. Exit 1 with the reason when
                   the summary model fails or a run is active on the thread.
  deerflow events  --workspace DIR --thread ID [--after SEQ] [--data-dir DIR]
  deerflow runs    --workspace DIR --thread ID [--data-dir DIR]
                   One line per run, with its usage when it reported one.
  deerflow cancel  --workspace DIR --run ID [--data-dir DIR]
  deerflow delete  --workspace DIR --thread ID [--data-dir DIR]
                   Removes the thread: its messages, runs, events, the viewed images no other
                   thread uses, and its .deerflow/threads/ID folder. Refused while a run is active.
  deerflow changes --workspace DIR --run ID [--data-dir DIR]
                   The files the run's file tools (write_file, str_replace) changed, one JSON
                   line each: path, status added|modified|deleted, before_sha256, after_sha256.
                   What bash changed is not recorded.
  deerflow revert  --workspace DIR --run ID [--path P]... [--allow-protected] [--data-dir DIR]
                   Puts those files back as they were before the run (an added file is removed).
                   A file changed again since the run is refused and kept (exit 1), the others
                   are reverted. Refused while a run of the thread is active.
  deerflow memory show [--workspace DIR] | clear | promote (--fact ID | --workspace DIR --section NAME) [--data-dir DIR] [--database URL]
                   Long-term memory (one per data directory): after a run, the user's messages
                   and the final answers not yet extracted are queued for fact extraction by the
                   model (the run's, or memory.model_name), done before the CLI exits ("memory:
                   updated (N facts)" on stderr). A thread's first request carries it as a hidden
                   <memory> block. What is learnt in a workspace is given only to that workspace's
                   threads; entries that read as instructions or permissions are not stored.
                   show prints it as JSON (--workspace: what that folder's threads are given);
                   clear empties it and drops queued updates; promote makes a fact (or a folder's
                   section, e.g. user.workContext) global. --database URL: the memory a
                   "serve --database URL" keeps in that Postgres database.
                   run --no-memory (or config memory.enabled false): no injection, no extraction.
  deerflow skills  list --workspace DIR [--data-dir DIR]
  deerflow skills  enable|disable NAME --workspace DIR [--data-dir DIR]
                   Agent Skills: every folder with a SKILL.md in the workspace's .deerflow/skills,
                   .agents/skills, .github/skills, .claude/skills, then <data-dir>/skills,
                   ~/.agents/skills, ~/.claude/skills and config skills.path (custom/, public/);
                   the first of a name wins. list prints one JSON line each (name, scope, path,
                   location, enabled, status loaded|broken|shadowed, diagnostics). A run offers
                   the enabled ones at /mnt/skills/<scope>/<folder> (read-only); a prompt
                   starting with /NAME activates that skill. enable/disable set DeerFlow's
                   skills.NAME.enabled in <data-dir>/extensions_config.json.
  deerflow serve   --workspace [NAME=]DIR... [--data-dir DIR] [--database URL|sqlite] [--port N]
                   [--host H] [--token-file F] [--model NAME] [--base-url URL] [--sandbox CHOICE]
                   DeerFlow's LangGraph-compatible HTTP API (threads, runs, runs/stream, join,
                   cancel, state, history) for @langchain/langgraph-sdk clients. Bearer token
                   from --token-file (or generated and printed once on stderr); 127.0.0.1:2024
                   unless --host/--port say otherwise. --database postgres://… (or config
                   database: {backend: postgres, postgres_url: $DATABASE_URL}) shares one
                   Postgres between several serve processes; the default is the data dir's SQLite.
                   VS Code uses it as its harness through ws://HOST:PORT/rpc (deerflow.harness.url).
  deerflow devcontainer approve --workspace DIR [--data-dir DIR] [--fingerprint SHA]
  deerflow devcontainer status  --workspace DIR [--data-dir DIR]
                   A folder's dev container is brought up only with a configuration you
                   approved (devcontainer.json, its Dockerfile/compose files, local features,
                   the scripts its initializeCommand names). approve prints what it approves,
                   including the commands that run on this machine, and records it.
  deerflow mcp list    --workspace DIR [--no-start] [--sandbox auto|local|devcontainer] [--data-dir DIR]
  deerflow mcp approve --workspace DIR [--server NAME [--fingerprint SHA]] [--data-dir DIR]
                   MCP servers: DeerFlow's extensions_config.json in the data dir (yours: they
                   start as configured), the folder's .deerflow/extensions_config.json and
                   .vscode/mcp.json (the workspace's: each starts only once approved as it is
                   now; an edit asks again). list starts them (stdio ones where the sandbox is:
                   inside an approved dev container) and prints each with its state, tools or
                   reason, one JSON line per server. Their tools (<server>_<tool>) join every run; a
                   call asks by default (--approval mcp=auto|ask|deny). tool_search.enabled (or
                   more than tool_search.auto_threshold MCP tools) defers them behind tool_search.

Configuration: DeerFlow's config.yaml in the data dir (or config.json, or the file DEERFLOW_CONFIG
names), DeerFlow's keys; $NAME values come from the environment. Keys this port does not
implement are listed once on stderr; a malformed file is a usage error (exit 2) naming its line.
deerflow config check [--data-dir DIR] lists them without running anything (exit 1: a bad value).
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case "run":
      return runCommand(rest);
    case "approve":
      return approveCommand(rest);
    case "state":
      return stateCommand(rest);
    case "threads":
      return threadsCommand(rest);
    case "compact":
      return compactCommand(rest);
    case "events":
      return eventsCommand(rest);
    case "runs":
      return runsCommand(rest);
    case "cancel":
      return cancelCommand(rest);
    case "delete":
      return deleteCommand(rest);
    case "memory":
      return memoryCommand(rest);
    case "skills":
      return skillsCommand(rest);
    case "devcontainer":
      return devcontainerCommand(rest);
    case "mcp":
      return mcpCommand(rest);
    case "config":
      return configCommand(rest);
    case "serve":
      return serveCommand(rest);
    case "changes":
      return changesCommand(rest);
    case "revert":
      return revertCommand(rest);
    case "help":
    case "--help":
    case "-h":
      process.stdout.write(USAGE);
      return 0;
    default:
      throw new UsageError(command ? `unknown command "${command}"` : "no command given");
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError) {
      process.stderr.write(`${err.message}\n\n${USAGE}`);
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
