/**
 * Secret scrubbing: the trust boundary's rule for what may be stored or shown. Everything that
 * crosses into the database, the journal, memory or a panel from a client or a model (a prompt, a
 * client context, approval decisions, memory facts) passes here first. It lives with the other
 * trust rules, not in the gateway, so memory and the gateway both depend on it and not on each
 * other.
 */

const SECRET_KEY = /(api[_-]?key|secret|token|password|passwd|credential|authorization|cookie|dsn)/i;
const SECRET_VALUE = /\b(sk-[A-Za-z0-9_-]{8,}|gh[pousr]_[A-Za-z0-9]{16,}|xox[abpr]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|Bearer\s+[A-Za-z0-9._~+/-]{8,})/g;

/** Remove secret-looking keys and redact secret-looking values, recursively. */
export function scrubSecrets(value: unknown, depth = 0): unknown {
  if (depth > 8) return null;
  if (typeof value === "string") return value.replace(SECRET_VALUE, "[redacted]");
  if (Array.isArray(value)) return value.map((v) => scrubSecrets(v, depth + 1));
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([k]) => !SECRET_KEY.test(k))
        .map(([k, v]) => [k, scrubSecrets(v, depth + 1)]),
    );
  }
  return value;
}
