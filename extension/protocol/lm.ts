/**
 * vscode.lm models over the harness connection (issue 25). Type-only, shared by the harness (the
 * RPC model bridge, models/vscodeLm/) and the host (host/lm/serve.ts, which answers with
 * `LanguageModelChat.sendRequest`). The harness never sees a `vscode` type: messages, tools and
 * stream parts are plain JSON here, mapped to the LM API's classes on the host.
 *
 * Flow: the harness sends the request `lm/chat` (harness → host) with a fresh `requestId`; the
 * host streams `lm/chunk` notifications (host → harness) carrying that id, then answers the
 * request with the estimated usage. JSON-RPC keeps one ordered stream, so every chunk arrives
 * before the answer. Cancelling the request (`$/cancelRequest`) cancels the LM request's token.
 */

/** The model names the harness and the picker use for vscode.lm models: `vscode-lm:<vendor>/<family>`. */
export const VSCODE_LM_PREFIX = "vscode-lm:";

export interface LmModelSelector {
  vendor: string;
  family: string;
}

export type LmPart =
  | { type: "text"; text: string }
  | { type: "tool_call"; callId: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; callId: string; text: string };

/**
 * User = 1 and Assistant = 2 are the only roles the stable API has (a System role needs the
 * `languageModelSystem` proposal): the system prompt travels as the first User message.
 */
export interface LmMessage {
  role: "user" | "assistant";
  content: LmPart[];
}

/** `LanguageModelChatTool`: the name matches ^[\w-]+$ (at most 64 characters). */
export interface LmTool {
  name: string;
  description: string;
  inputSchema?: Record<string, unknown>;
}

export interface LmChatParams {
  requestId: string;
  model: LmModelSelector;
  messages: LmMessage[];
  tools?: LmTool[];
  /** `LanguageModelChatToolMode`: Required only with exactly one tool. */
  toolMode?: "auto" | "required";
}

/** What the host streams back: the parts of `LanguageModelChatResponse.stream`. */
export type LmStreamPart = { type: "text"; text: string } | { type: "tool_call"; callId: string; name: string; input: Record<string, unknown> };

export interface LmChunk {
  requestId: string;
  parts: LmStreamPart[];
}

/** Token counts are `LanguageModelChat.countTokens` estimates: the LM API reports no usage. */
export interface LmChatResult {
  usage: { input_tokens: number; output_tokens: number; estimated: true };
  /** The model that answered (`id`, and `vendor/family`). */
  model: { id: string; vendor: string; family: string; name: string };
}

/**
 * Why a vscode.lm request failed, as the host reports it in the JSON-RPC error's `data.code`:
 * `LanguageModelError.code` (`NotFound`, `NoPermissions`, `Blocked`), Copilot's
 * `model_not_supported`, a cancelled request, or anything else.
 */
export type LmErrorCode = "lm_not_found" | "lm_no_permissions" | "lm_blocked" | "lm_model_not_supported" | "lm_cancelled" | "lm_failed";

export interface LmErrorData {
  code: LmErrorCode;
}
