/**
 * A failed vscode.lm request, in words a user can act on. The host reports why (protocol/lm.ts
 * LmErrorCode, from `LanguageModelError.code` and Copilot's `model_not_supported`); this says what
 * to do. Never a silent fallback to another model (Roo's "limited" fake model is the
 * anti-pattern): the run ends with this text.
 *
 * `status` is an HTTP-like status for LLMErrorHandlingMiddleware's classifier, which is the one
 * place that decides retries: Blocked (throttled) is 429 and retried with backoff; the others are
 * not retried (each retry is another billed request, and retrying changes nothing).
 */
import type { LmErrorCode } from "../../../protocol/lm.js";

export class VsCodeLmError extends Error {
  readonly status: number | undefined;
  constructor(
    readonly code: LmErrorCode,
    message: string,
    /** What the host said (the provider's own message). */
    readonly detail: string,
  ) {
    super(message);
    this.name = "VsCodeLmError";
    this.status = STATUS[code];
  }
}

const STATUS: Record<LmErrorCode, number | undefined> = {
  lm_not_found: 404,
  lm_no_permissions: 403,
  lm_blocked: 429,
  lm_model_not_supported: 400,
  lm_cancelled: undefined,
  lm_failed: undefined,
};

const LM_CODES = new Set<string>(Object.keys(STATUS));
export function isLmErrorCode(v: unknown): v is LmErrorCode {
  return typeof v === "string" && LM_CODES.has(v);
}

/** The error for `code` on model `model` (`vendor/family`), with the host's `detail` last. */
export function vsCodeLmError(code: LmErrorCode, model: string, detail: string): VsCodeLmError {
  const said = detail ? ` VS Code said: ${detail}` : "";
  switch (code) {
    case "lm_not_found":
      return new VsCodeLmError(
        code,
        `The VS Code language model ${model} is not available (NotFound). Install or sign in to the extension that provides it (for Copilot models: sign in to GitHub Copilot and enable the model in Copilot Chat), or pick another model with DeerFlow: Select Model.${said}`,
        detail,
      );
    case "lm_no_permissions":
      return new VsCodeLmError(
        code,
        `DeerFlow may not use the VS Code language model ${model} (NoPermissions). Allow DeerFlow when VS Code asks to let it use language models (Accounts menu → Manage Language Model Access), then send the message again.${said}`,
        detail,
      );
    case "lm_blocked":
      return new VsCodeLmError(
        code,
        `The VS Code language model ${model} refused the request (Blocked): its provider is throttling DeerFlow, often for too many requests in a short time. Wait a minute and continue, or pick another model.${said}`,
        detail,
      );
    case "lm_model_not_supported":
      return new VsCodeLmError(
        code,
        `The VS Code language model ${model} answered model_not_supported: enable the model in Copilot Chat (its model picker → Manage Models, or accept the model's terms there), then send the message again.${said}`,
        detail,
      );
    case "lm_cancelled":
      return new VsCodeLmError(code, `The request to the VS Code language model ${model} was cancelled in VS Code.${said}`, detail);
    default:
      return new VsCodeLmError(code, `The VS Code language model ${model} failed: ${detail || "no reason given"}`, detail);
  }
}
