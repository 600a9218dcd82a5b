/**
 * `@deerflow` in the Chat view (issue 25): a chat request starts a run on the workspace's DeerFlow
 * thread through `runs/start`, the same launcher the panel uses (one run system, one journal),
 * and follows it through the journal (`events/subscribe`) as the panel does.
 *
 * The response: the answer as markdown while it streams; each tool call as a `progress` line;
 * presented artifacts as `anchor`s that open the file; tool calls that wait on the user with their
 * arguments in full, escaped (approvalText.ts), and Approve / Reject / Open in Panel `button`s (no
 * stable confirmation part exists; no Approve when the arguments were too long to show). Chat's Stop
 * stops following the run and asks whether to cancel the run itself; a run that outlives the chat
 * turn keeps running in the harness, and the next request says so with a button to open it.
 * The run's model is the one DeerFlow has selected (the panel's picker, Select Model: configured
 * or vscode.lm), whatever the Chat view's own picker shows (issue 30 item 6), and the answer says
 * which; only with no DeerFlow model at all does the Chat view's model run it. `/new` starts a new thread,
 * `/plan` runs in plan mode.
 *
 * The Chat view and its participants are reachable from VS Code 1.104 on (code-server shows no
 * Chat view before); before that the participant only says so.
 */
import { randomUUID } from "node:crypto";
import { basename } from "node:path";
import * as vscode from "vscode";
import type { JournalEvent } from "../../protocol/rpc.js";
import type { PendingApproval } from "../../protocol/approvals.js";
import { VSCODE_LM_PREFIX } from "../../protocol/lm.js";
import type { Ctx } from "../context.js";
import { errorText } from "../harnessClient.js";
import { outcomeLabel, toolOutcome, type ToolOutcome, type ToolResultLike } from "../../protocol/toolOutcome.js";
import { chatApprovalText } from "./approvalText.js";

export const PARTICIPANT_ID = "deerflow.chat";
export const DECIDE_COMMAND = "deerflow.chat.decide";

/**
 * What each shown pair of Approve / Reject buttons decides, by a one-time random key. A command is
 * callable by any extension, so the buttons carry only the key: a caller that did not get it from
 * the chat view decides nothing, and a key works once (Approve and Reject of one turn share it).
 */
interface ShownDecision {
  folder: string;
  threadId: string;
  model?: string;
  toolCallIds: string[];
  /** Every argument was shown: a yes may come from here (else only a no, or the panel). */
  approvable: boolean;
}
const shownDecisions = new Map<string, ShownDecision>();

export function atLeast(version: string, major: number, minor: number): boolean {
  const [a = 0, b = 0] = version.split(".").map((n) => Number.parseInt(n, 10));
  return a > major || (a === major && b >= minor);
}

/** Which thread a chat request runs on: /new makes one, else the panel's, else the newest, else a new one. */
async function threadFor(ctx: Ctx, folder: string, fresh: boolean): Promise<string> {
  if (fresh) return (await ctx.harness.request("threads/create", { workspaceFolder: folder })).thread_id;
  const shown = ctx.session.shownThreadId;
  if (shown) return shown;
  const threads = await ctx.harness.request("threads/list", { workspaceFolder: folder });
  const newest = [...threads].sort((a, b) => b.updated_at.localeCompare(a.updated_at))[0];
  return newest?.thread_id ?? (await ctx.harness.request("threads/create", { workspaceFolder: folder })).thread_id;
}

function files(request: vscode.ChatRequest): string[] {
  const out: string[] = [];
  for (const r of request.references) {
    const v = r.value;
    if (v instanceof vscode.Uri && v.scheme === "file") out.push(v.fsPath);
    else if (v instanceof vscode.Location && v.uri.scheme === "file") out.push(v.uri.fsPath);
  }
  return [...new Set(out)];
}

/**
 * The waiting calls with their arguments in full, escaped (chat/approvalText.ts), and what may be
 * decided here: Approve only when every argument was shown; Reject and Open in Panel always.
 */
function approvalButtons(stream: vscode.ChatResponseStream, folder: string, threadId: string, model: string | undefined, pending: PendingApproval[]): void {
  const { markdown, complete } = chatApprovalText(pending);
  stream.markdown(new vscode.MarkdownString(markdown));
  // The decided calls run on the model the chat turn used (else runs/decide takes the default model).
  const key = randomUUID();
  shownDecisions.set(key, { folder, threadId, ...(model ? { model } : {}), toolCallIds: pending.map((p) => p.tool_call_id), approvable: complete });
  const decide = (decision: "approve" | "reject") => [{ key, decision }];
  if (complete) stream.button({ command: DECIDE_COMMAND, title: "Approve", arguments: decide("approve") });
  stream.button({ command: DECIDE_COMMAND, title: "Reject", arguments: decide("reject") });
  stream.button({ command: "deerflow.openPanel", title: "Open in Panel" });
}

/** The complete tool messages of an `updates` event (any node's `messages`). */
function toolMessagesOf(data: Record<string, Record<string, unknown>>): Array<ToolResultLike & { tool_call_id: string }> {
  const out: Array<ToolResultLike & { tool_call_id: string }> = [];
  for (const update of Object.values(data)) {
    const messages = update?.messages;
    if (!Array.isArray(messages)) continue;
    for (const m of messages as Array<Record<string, unknown>>) {
      if (m?.type !== "tool" || typeof m.tool_call_id !== "string") continue;
      const content = typeof m.content === "string" ? m.content : JSON.stringify(m.content ?? "");
      out.push({
        tool_call_id: m.tool_call_id,
        content,
        status: typeof m.status === "string" ? m.status : undefined,
        name: typeof m.name === "string" ? m.name : undefined,
        additional_kwargs: typeof m.additional_kwargs === "object" && m.additional_kwargs !== null ? (m.additional_kwargs as Record<string, unknown>) : undefined,
      });
    }
  }
  return out;
}

/** "✗ bash: Failed (exit code 2)" as text (a reason or an error is not Markdown to render). */
function outcomeLine(name: string | undefined, outcome: ToolOutcome): vscode.MarkdownString {
  const md = new vscode.MarkdownString("\n\n");
  md.appendMarkdown(outcome.kind === "rejected" ? "$(circle-slash) " : "$(error) ");
  md.appendText(`${name ?? "tool"}: ${outcomeLabel(outcome)}`);
  md.appendMarkdown("\n\n");
  md.supportThemeIcons = true;
  return md;
}

/** Follows one run from `afterSeq` until its `end` (or until chat stops it): renders as it goes. */
function follow(ctx: Ctx, folder: string, threadId: string, runId: string, afterSeq: number, stream: vscode.ChatResponseStream, token: vscode.CancellationToken) {
  return new Promise<{ end?: Extract<JournalEvent, { event: "end" }>; lost?: string }>((resolve, reject) => {
    let subscriptionId: string | undefined;
    // Batches that arrive before events/subscribe answers, with the subscription they belong to:
    // the panel may follow the same thread, and its live batches would repeat what the replay sends.
    const early: Array<{ subscriptionId: string; events: JournalEvent[] }> = [];
    const announced = new Set<string>();
    const told = new Set<string>();
    const handle = (events: JournalEvent[]) => {
      for (const e of events) {
        if (e.run_id !== runId) continue;
        if (e.event === "messages") {
          for (const c of e.data) {
            if (c.type !== "ai") continue;
            if (c.content) stream.markdown(c.content);
            for (const t of c.tool_call_chunks ?? []) {
              const key = `${c.id}:${t.index ?? 0}`;
              if (t.name && !announced.has(key)) {
                announced.add(key);
                stream.progress(`Running ${t.name}…`);
              }
            }
          }
        } else if (e.event === "updates") {
          for (const m of toolMessagesOf(e.data)) {
            if (told.has(m.tool_call_id)) continue;
            told.add(m.tool_call_id);
            const outcome = toolOutcome(m);
            if (outcome.kind !== "done") stream.markdown(outcomeLine(m.name, outcome));
          }
        } else if (e.event === "end") {
          done({ end: e });
        }
      }
    };
    const listener = ctx.harness.onNotification("events/event", (p) => {
      if (subscriptionId === undefined) early.push({ subscriptionId: p.subscriptionId, events: p.events });
      else if (p.subscriptionId === subscriptionId) handle(p.events);
    });
    const stop = token.onCancellationRequested(() => done({}));
    // A harness that restarts or fails mid-run never sends this subscription's end: say so, not hang.
    const restarted = ctx.harness.onDidStart(() => done({ lost: "The DeerFlow harness restarted while the run was going." }));
    const failed = ctx.harness.onDidFail((message) => done({ lost: `The DeerFlow harness stopped: ${message}` }));
    function done(r: { end?: Extract<JournalEvent, { event: "end" }>; lost?: string }) {
      listener.dispose();
      stop.dispose();
      restarted.dispose();
      failed.dispose();
      if (subscriptionId) void ctx.harness.request("events/unsubscribe", { subscriptionId }).catch(() => undefined);
      resolve(r);
    }
    ctx.harness.request("events/subscribe", { workspaceFolder: folder, threadId, afterSeq }).then((s) => {
      subscriptionId = s.subscriptionId;
      // Replayed events may arrive before the answer: only this subscription's are rendered.
      for (const batch of early.splice(0)) if (batch.subscriptionId === subscriptionId) handle(batch.events);
    }, (err: unknown) => {
      listener.dispose();
      stop.dispose();
      restarted.dispose();
      failed.dispose();
      reject(err instanceof Error ? err : new Error(String(err)));
    });
  });
}

async function handler(ctx: Ctx, request: vscode.ChatRequest, stream: vscode.ChatResponseStream, token: vscode.CancellationToken): Promise<vscode.ChatResult> {
  if (!atLeast(vscode.version, 1, 104)) {
    stream.markdown(`@deerflow in the Chat view needs VS Code 1.104 or later (this is ${vscode.version}). Use the DeerFlow panel (DeerFlow: Open Panel).`);
    return {};
  }
  const folder = (await ctx.session.folder(false))?.uri.fsPath;
  if (!folder) {
    stream.markdown("Open a folder first: DeerFlow's threads belong to a workspace folder.");
    return {};
  }
  const threadId = await threadFor(ctx, folder, request.command === "new");
  const state = await ctx.harness.request("threads/state", { workspaceFolder: folder, threadId });
  if (state.active_run) {
    stream.markdown(`Run \`${state.active_run.run_id}\` is still running on this thread (it outlived an earlier chat turn). Open it in the panel to follow it.`);
    stream.button({ command: "deerflow.openPanel", title: "Open in Panel" });
    return { metadata: { runId: state.active_run.run_id, threadId } };
  }
  if (request.command === "new" && !request.prompt.trim()) {
    stream.markdown("A new DeerFlow thread is ready: ask away.");
    return { metadata: { threadId } };
  }
  const before = new Set(state.artifacts.map((a) => a.path));
  const model = ctx.session.model() ?? (request.model ? `${VSCODE_LM_PREFIX}${request.model.vendor}/${request.model.family}` : undefined);
  if (model) stream.progress(`DeerFlow on ${ctx.modelChoices().find((m) => m.name === model)?.label ?? model}`);
  const started = await ctx.harness.request("runs/start", {
    workspaceFolder: folder,
    threadId,
    prompt: request.prompt,
    ...(files(request).length > 0 ? { files: files(request) } : {}),
    ...(model ? { model } : {}),
    ...(request.command === "plan" ? { planMode: true } : {}),
    // As in the panel: a chat message while calls wait rejects them, with it as the reason.
    rejectPending: true,
  });
  const { end, lost } = await follow(ctx, folder, threadId, started.run_id, state.last_seq, stream, token);
  if (lost) {
    stream.button({ command: "deerflow.openPanel", title: "Open in Panel" });
    return { errorDetails: { message: `${lost} Run ${started.run_id} is in the panel, with how it ended.` }, metadata: { runId: started.run_id, threadId } };
  }
  if (!end) {
    // Chat's Stop: the run goes on in the harness unless the user says otherwise.
    void vscode.window.showInformationMessage("DeerFlow: the chat stopped following the run. Cancel the run itself too?", "Cancel Run", "Open in Panel").then(async (choice) => {
      if (choice === "Cancel Run") await ctx.harness.request("runs/cancel", { workspaceFolder: folder, runId: started.run_id });
      else if (choice === "Open in Panel") await vscode.commands.executeCommand("deerflow.openPanel");
    });
    return { metadata: { runId: started.run_id, threadId } };
  }
  const after = await ctx.harness.request("threads/state", { workspaceFolder: folder, threadId });
  // host_path is "" for a file of a remote harness this window cannot reach: the panel downloads those.
  for (const a of after.artifacts) if (!before.has(a.path) && a.exists && a.host_path) stream.anchor(vscode.Uri.file(a.host_path), basename(a.host_path));
  if (end.data.stop_reason === "approval" && end.data.pending_approvals?.length) approvalButtons(stream, folder, threadId, model, end.data.pending_approvals);
  if (end.data.status !== "success") {
    return { errorDetails: { message: end.data.error ?? `The run ended ${end.data.status}.` }, metadata: { runId: started.run_id, threadId } };
  }
  return { metadata: { runId: started.run_id, threadId } };
}

export function registerChatParticipant(ctx: Ctx): vscode.Disposable[] {
  const decide = vscode.commands.registerCommand(DECIDE_COMMAND, async (arg: { key?: unknown; decision?: unknown } | undefined) => {
    const shown = typeof arg?.key === "string" ? shownDecisions.get(arg.key) : undefined;
    const decision: "approve" | "reject" | undefined = arg?.decision === "approve" || arg?.decision === "reject" ? arg.decision : undefined;
    if (!shown || !decision) {
      void vscode.window.showErrorMessage("DeerFlow: these calls were already decided here, or the buttons are from an earlier session. Open the panel to decide them.");
      return undefined;
    }
    // A yes covers what was shown: calls whose arguments did not fit are approved in the panel.
    if (decision === "approve" && !shown.approvable) {
      void vscode.window.showErrorMessage("DeerFlow: these calls' arguments were too long to show in the chat. Open the panel to read them and decide.");
      return undefined;
    }
    shownDecisions.delete(arg!.key as string);
    try {
      const decisions = shown.toolCallIds.map((tool_call_id) => ({ tool_call_id, decision }));
      const r = await ctx.harness.request("runs/decide", { workspaceFolder: shown.folder, threadId: shown.threadId, decisions, ...(shown.model ? { model: shown.model } : {}) });
      void vscode.window.showInformationMessage(`DeerFlow: ${decision === "approve" ? "approved" : "rejected"}; the run goes on (${r.run_id}).`, "Open in Panel").then((c) => {
        if (c) void vscode.commands.executeCommand("deerflow.openPanel");
      });
      return r.run_id;
    } catch (err) {
      void vscode.window.showErrorMessage(`DeerFlow: ${errorText(err)}`);
      return undefined;
    }
  });
  // Not on every VS Code the engine range allows, and absent in some forks: then no participant.
  if (typeof vscode.chat?.createChatParticipant !== "function") return [decide];
  const participant = vscode.chat.createChatParticipant(PARTICIPANT_ID, (request, _context, stream, token) =>
    handler(ctx, request, stream, token).catch((err: unknown) => ({ errorDetails: { message: `DeerFlow: ${errorText(err)}` } })),
  );
  participant.iconPath = vscode.Uri.joinPath(ctx.extension.extensionUri, "media", "deerflow.svg");
  return [decide, participant];
}
