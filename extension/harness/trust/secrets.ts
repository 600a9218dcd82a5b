/**
 * Secret scrubbing: the trust boundary's rule for what may be stored or shown. Everything that
 * crosses into the database, the journal, memory or a panel from a client or a model (a prompt, a
 * client context, approval decisions, memory facts) passes here first. It lives with the other
 * trust rules, not in the gateway, so memory and the gateway both depend on it and not on each
 * other.
 *
 * What counts as a secret value (each format has its own test, test/unit/trust/secrets.test.ts,
 * with ordinary code and prose that must stay as it is):
 * - provider keys by their documented prefixes: OpenAI/Anthropic `sk-…`, Stripe `sk_live_`/
 *   `rk_live_` (and `_test_`), Google `AIza…`, GitLab `glpat-`, Hugging Face `hf_`, npm `npm_`,
 *   GitHub `ghp_`/`gho_`/`ghu_`/`ghs_`/`ghr_` and `github_pat_`, Slack `xox?-`, AWS key ids
 *   (`AKIA`/`ASIA`);
 * - AWS secret access keys: 40 characters of base64 have no prefix, and a git commit id is 40
 *   characters too, so only a 40-character value right after a "secret … key" name is one;
 * - `Bearer …` credentials, JSON Web Tokens (three base64url parts, the first two `eyJ…`), PEM
 *   private key blocks (to their END line, or to the end of the base64 when it was cut off), and
 *   the `user:password` of a `scheme://user:password@host` URL (the scheme and host stay readable).
 * Each pattern is bounded or anchored on a literal prefix, so scrubbing stays linear in the text:
 * prompts and tool output reach it, and a crafted text must not stall the harness.
 */

const SECRET_KEY = /(api[_-]?key|secret|token|password|passwd|credential|authorization|cookie|dsn)/i;

const PREFIXED = [
  /\bsk-[A-Za-z0-9_-]{8,}/g,
  /\b[sr]k_(?:live|test)_[A-Za-z0-9]{10,}/g,
  /\bAIza[0-9A-Za-z_-]{35}(?![0-9A-Za-z_-])/g,
  /\bglpat-[0-9A-Za-z_-]{20,}/g,
  // Underscores end the run: identifiers such as `hf_hub_download` or `npm_config_cache` are not keys.
  /\bhf_[A-Za-z0-9]{30,}/g,
  /\bnpm_[A-Za-z0-9]{36,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{16,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{22,}/g,
  // Slack tokens always hold digits (team and user ids): a word chain after "xoxo-" is no token.
  /\bxox[a-z]-(?=[A-Za-z0-9-]{0,200}\d)[A-Za-z0-9-]{10,}/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bBearer\s+[A-Za-z0-9._~+/-]{8,}/g,
  /\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}/g,
];

/**
 * `aws_secret_access_key = …`, `AWS_SECRET_ACCESS_KEY=…`, "AWS secret key is …": the name, an
 * optional "is"/"was", up to 20 separators, then 40 characters.
 */
const AWS_SECRET = /(\b(?:aws)?[_ -]?secret[_ -]?(?:access[_ -]?)?key\b(?:\s+(?:is|was)\b)?[^A-Za-z0-9/+\n]{1,20})[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])/gi;

/** `scheme://user:password@`: both parts go, the scheme and what follows the `@` stay. Bounded runs: linear time. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]{0,30}:\/\/)[^\s:/@]{1,256}:[^\s/@]{1,256}@/gi;

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----/g;
/** What follows a BEGIN line whose END was cut off: its base64 lines (whitespace-separated, so unambiguous). */
const PEM_BODY = /(?:\s+[A-Za-z0-9+/=]{4,})*/y;

const REDACTED = "[redacted]";

/** PEM private keys, found with indexOf-style scans (a lazy `[\s\S]*?` per BEGIN would be quadratic on a crafted text). */
function scrubPem(text: string): string {
  if (!text.includes("PRIVATE KEY-----")) return text;
  let out = "";
  let at = 0;
  // The END found last, reused while it lies ahead; once none is found, none lies ahead of any later BEGIN either.
  let end: RegExpExecArray | null | undefined;
  PEM_BEGIN.lastIndex = 0;
  for (let begin = PEM_BEGIN.exec(text); begin; begin = PEM_BEGIN.exec(text)) {
    out += text.slice(at, begin.index);
    const from = begin.index + begin[0].length;
    if (end === undefined || (end && end.index < from)) {
      PEM_END.lastIndex = from;
      end = PEM_END.exec(text);
    }
    if (end) {
      at = end.index + end[0].length;
    } else {
      // No END anywhere after: the block was cut off; the base64 that follows goes with it.
      PEM_BODY.lastIndex = begin.index + begin[0].length;
      PEM_BODY.exec(text);
      at = PEM_BODY.lastIndex;
    }
    out += REDACTED;
    PEM_BEGIN.lastIndex = at;
  }
  return out + text.slice(at);
}

/** One string with every secret-looking value replaced by `[redacted]`. */
export function scrubText(text: string): string {
  let out = scrubPem(text);
  for (const re of PREFIXED) out = out.replace(re, REDACTED);
  out = out.replace(AWS_SECRET, (_m, name: string) => `${name}${REDACTED}`);
  return out.replace(URL_CREDENTIALS, (_m, scheme: string) => `${scheme}${REDACTED}@`);
}

/** Remove secret-looking keys and redact secret-looking values, recursively. */
export function scrubSecrets(value: unknown, depth = 0): unknown {
  if (depth > 8) return null;
  if (typeof value === "string") return scrubText(value);
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
