/**
 * The host end of the vscode.lm bridge (protocol/lm.ts): the harness asks `lm/chat`, this sends
 * the request with `LanguageModelChat.sendRequest` and streams its parts back as `lm/chunk`
 * notifications, then answers with `countTokens` estimates (the LM API reports no usage). The
 * harness cancelling its request cancels the token sendRequest got; a failure is answered with
 * the LmErrorCode the harness turns into what the user should do (host/lm/errors.ts).
 *
 * VS Code itself shows the consent dialog on the first request ("DeerFlow wants to use the
 * language models provided by …"), with the justification below.
 */
import * as vscode from "vscode";
import { ResponseError } from "vscode-languageclient/node.js";
import type { LmChatParams, LmChatResult, LmMessage, LmStreamPart } from "../../protocol/lm.js";
import type { HarnessClient } from "../harnessClient.js";
import { errorText } from "../harnessClient.js";
import { lmErrorCode } from "./errors.js";
import { lmChatRefusal, SHARE_SETTING } from "./share.js";
import { trustedSettingValue } from "../trustedSetting.js";

const JUSTIFICATION = "DeerFlow runs its agent on the model you picked: each step of a run is one request.";

function toVsMessage(m: LmMessage): vscode.LanguageModelChatMessage {
  if (m.role === "assistant") {
    const parts = m.content.map((p) =>
      p.type === "tool_call" ? new vscode.LanguageModelToolCallPart(p.callId, p.name, p.input) : new vscode.LanguageModelTextPart(p.type === "text" ? p.text : p.text),
    );
    return vscode.LanguageModelChatMessage.Assistant(parts);
  }
  const parts = m.content.map((p) =>
    p.type === "tool_result"
      ? new vscode.LanguageModelToolResultPart(p.callId, [new vscode.LanguageModelTextPart(p.text)])
      : new vscode.LanguageModelTextPart(p.type === "text" ? p.text : JSON.stringify(p.input)),
  );
  return vscode.LanguageModelChatMessage.User(parts);
}

async function chat(harness: HarnessClient, params: LmChatParams, token: vscode.CancellationToken): Promise<LmChatResult> {
  const { vendor, family } = params.model;
  const [model] = await vscode.lm.selectChatModels({ vendor, family });
  if (!model) {
    throw new ResponseError(-32000, `no model of vendor "${vendor}" and family "${family}" is registered in this VS Code`, { code: "lm_not_found" });
  }
  const messages = params.messages.map(toVsMessage);
  const options: vscode.LanguageModelChatRequestOptions = {
    justification: JUSTIFICATION,
    ...(params.tools && params.tools.length > 0
      ? {
          tools: params.tools.map((t) => ({ name: t.name, description: t.description, ...(t.inputSchema ? { inputSchema: t.inputSchema } : {}) })),
          toolMode: params.toolMode === "required" ? vscode.LanguageModelChatToolMode.Required : vscode.LanguageModelChatToolMode.Auto,
        }
      : {}),
  };
  try {
    const response = await model.sendRequest(messages, options, token);
    let said = "";
    for await (const part of response.stream) {
      let out: LmStreamPart | undefined;
      if (part instanceof vscode.LanguageModelTextPart) {
        out = { type: "text", text: part.value };
        said += part.value;
      } else if (part instanceof vscode.LanguageModelToolCallPart) {
        out = { type: "tool_call", callId: part.callId, name: part.name, input: (part.input ?? {}) as Record<string, unknown> };
        said += `${part.name}${JSON.stringify(part.input)}`;
      }
      if (out) harness.notify("lm/chunk", { requestId: params.requestId, parts: [out] });
    }
    const { input, output } = await estimateUsage(model, messages, params.messages, said, token);
    return {
      usage: { input_tokens: input, output_tokens: output, estimated: true },
      model: { id: model.id, vendor: model.vendor, family: model.family, name: model.name },
    };
  } catch (err) {
    if (err instanceof ResponseError) throw err;
    throw new ResponseError(-32000, errorText(err), { code: lmErrorCode(err, token.isCancellationRequested) });
  }
}

/**
 * Token estimates for a finished answer. The answer is already streamed and billed: a provider
 * whose countTokens fails (unsupported, or the turn was cancelled just after the last part) must
 * not turn it into a failed call the harness would retry (another billed request), so a failure
 * falls back to four characters a token, still labelled estimated.
 */
async function estimateUsage(
  model: vscode.LanguageModelChat,
  messages: vscode.LanguageModelChatMessage[],
  wire: readonly unknown[],
  said: string,
  token: vscode.CancellationToken,
): Promise<{ input: number; output: number }> {
  try {
    const inputs = await Promise.all(messages.map((m) => model.countTokens(m, token)));
    const output = said ? await model.countTokens(said, token) : 0;
    return { input: inputs.reduce((a, b) => a + b, 0), output };
  } catch {
    return { input: Math.ceil(JSON.stringify(wire).length / 4), output: Math.ceil(said.length / 4) };
  }
}

/**
 * Serves the harness's `lm/chat` requests for as long as the returned disposable lives: the local
 * harness's always, a remote harness's only when the user shared the editor's models with that
 * server (lm/share.ts; read per request, so a settings change applies to the next one).
 */
export function serveLanguageModels(harness: HarnessClient, log: vscode.LogOutputChannel): vscode.Disposable {
  return harness.onRequest("lm/chat", async (params, token, source) => {
    const refusal = lmChatRefusal(source, trustedSettingValue(vscode.workspace.getConfiguration("deerflow").inspect<unknown>(SHARE_SETTING), []));
    if (refusal) {
      log.warn(refusal);
      throw new ResponseError(-32000, refusal, { code: "lm_no_permissions" });
    }
    try {
      return await chat(harness, params, token);
    } catch (err) {
      log.warn(`vscode.lm request on ${params.model.vendor}/${params.model.family} failed: ${errorText(err)}`);
      throw err;
    }
  });
}
