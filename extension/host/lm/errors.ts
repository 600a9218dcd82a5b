/**
 * Why a vscode.lm request failed, as the wire says it (protocol/lm.ts LmErrorCode). Kept free of
 * the `vscode` import (it reads the error's fields) so the unit tests cover every kind.
 *
 * `LanguageModelError.code` names NotFound / NoPermissions / Blocked; a provider's own error
 * (Copilot's "400 model_not_supported") reaches a consumer only as text, so that one kind is read
 * off the message: the LM API gives no other signal for it.
 */
import type { LmErrorCode } from "../../protocol/lm.js";

const BY_CODE: Record<string, LmErrorCode> = {
  NotFound: "lm_not_found",
  NoPermissions: "lm_no_permissions",
  Blocked: "lm_blocked",
};

export function lmErrorCode(err: unknown, cancelled: boolean): LmErrorCode {
  if (cancelled) return "lm_cancelled";
  const e = err as { name?: unknown; code?: unknown; message?: unknown } | null;
  const message = typeof e?.message === "string" ? e.message : "";
  if (/\bmodel_not_supported\b/.test(message)) return "lm_model_not_supported";
  if (typeof e?.code === "string" && BY_CODE[e.code]) return BY_CODE[e.code]!;
  // A LanguageModelError's name carries its code too ("NoPermissions", or "Blocked (…)").
  const name = typeof e?.name === "string" ? e.name : "";
  for (const [k, v] of Object.entries(BY_CODE)) if (name === k || name.startsWith(`${k} `) || name.endsWith(`.${k}`)) return v;
  if (name === "Canceled" || name === "CancellationError") return "lm_cancelled";
  return "lm_failed";
}
