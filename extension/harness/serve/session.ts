/**
 * Sign-in for DeerFlow's web UI with what serve already has: its token. DeerFlow's login page
 * posts `username` + `password` to `/api/v1/auth/login/local`; the password is serve's token, and
 * the answer sets DeerFlow's two cookies:
 *   - `access_token`: a signed session, `v1.<expiry>.<user>.<mac>` (HMAC-SHA256 keyed by the token),
 *     HttpOnly, SameSite=Lax, expiring (DeerFlow's 7 days). Never the token itself; rotating the
 *     token ends every session, and no account database exists.
 *   - `csrf_token`: random, readable by the page, echoed as `X-CSRF-Token` on every write made
 *     with the cookie (the bearer token needs no CSRF header: a browser never sends it by itself).
 * Every route takes the bearer token or the session cookie (serveAuth); the public routes are
 * the three the login page needs before it has either. Error bodies on `/api` are DeerFlow's
 * (`{detail}`), at the root they stay serve's (`{error, message}`).
 */
import { createHmac, randomBytes, timingSafeEqual, createHash } from "node:crypto";
import type { Context, Hono, MiddlewareHandler } from "hono";
import { getCookie } from "hono/cookie";
import { bearerMatches } from "./auth.js";
import { requestOrigin as requestOriginOf } from "./origin.js";

/** DeerFlow's session length. */
const SESSION_SECONDS = 7 * 24 * 3600;
/** A wrong password waits this long, whatever was wrong with it: guessing is slow and says nothing. */
const FAILED_LOGIN_DELAY_MS = 400;
/** The user shown when the sign-in name is not an address (DeerFlow's UI checks `email` with zod's `.email()`). */
const FALLBACK_USER = "operator@deerflow.local";
const PUBLIC = new Set(["/api/v1/auth/setup-status", "/api/v1/auth/providers", "/api/v1/auth/login/local"]);
const WRITES = new Set(["POST", "PUT", "PATCH", "DELETE"]);

const digest = (s: string) => createHash("sha256").update(s).digest();
const safeEqual = (a: string, b: string) => timingSafeEqual(digest(a), digest(b));
const looksLikeEmail = (s: string) => /^[^\s@]{1,64}@[^\s@]{1,200}\.[^\s@.]{2,63}$/.test(s);

function mac(token: string, payload: string): string {
  return createHmac("sha256", token).update(`deerflow-serve-session:${payload}`).digest("base64url");
}

/** A session for `user` until `expires` (seconds since the epoch). */
export function signSession(token: string, user: string, expires: number): string {
  const payload = `v1.${expires}.${Buffer.from(user, "utf8").toString("base64url")}`;
  return `${payload}.${mac(token, payload)}`;
}

/** The session's user, when the cookie is one this token signed and it has not expired. */
export function verifySession(token: string, cookie: string | undefined, now = Date.now()): string | undefined {
  const m = /^(v1\.(\d{1,12})\.([A-Za-z0-9_-]{0,400}))\.([A-Za-z0-9_-]{43})$/.exec(cookie ?? "");
  if (!m) return undefined;
  if (!safeEqual(mac(token, m[1]!), m[4]!)) return undefined;
  if (Number(m[2]) * 1000 <= now) return undefined;
  return Buffer.from(m[3]!, "base64url").toString("utf8");
}

/** The origin this request was made to (origin.ts): a proxy's forwarded proto and host, else Host. */
const requestOrigin = (c: Context) => requestOriginOf((name) => c.req.header(name));

const isApi = (c: Context) => c.req.path === "/api" || c.req.path.startsWith("/api/");

function unauthenticated(c: Context) {
  if (isApi(c)) return c.json({ detail: { code: "not_authenticated", message: "Sign in, or send Authorization: Bearer <token>." } }, 401);
  c.header("WWW-Authenticate", 'Bearer realm="deerflow"');
  return c.json({ error: "unauthorized", message: "This server needs its bearer token: Authorization: Bearer <token>." }, 401);
}

/**
 * Every route's gate: the bearer token, or a valid session cookie (with the CSRF header on a
 * write). The login page's own three routes are public.
 */
export function serveAuth(token: string): MiddlewareHandler {
  return async (c, next) => {
    if (PUBLIC.has(c.req.path)) return next();
    if (bearerMatches(c.req.header("Authorization"), token)) return next();
    const user = verifySession(token, getCookie(c, "access_token"));
    if (user === undefined) return unauthenticated(c);
    if (WRITES.has(c.req.method) && c.req.path !== "/api/v1/auth/logout") {
      const sent = c.req.header("X-CSRF-Token");
      const cookie = getCookie(c, "csrf_token");
      if (!sent || !cookie || !safeEqual(sent, cookie)) return c.json({ detail: "CSRF token missing. Include X-CSRF-Token header." }, 403);
    }
    c.set("sessionUser" as never, user as never);
    return next();
  };
}

const cookie = (name: string, value: string, attrs: string[]) => [`${name}=${value}`, "Path=/", ...attrs].join("; ");

/** DeerFlow's `/api/v1/auth/*` routes, answered from the token (no accounts, no registration). */
export function mountAuth(app: Hono, token: string): void {
  app.get("/api/v1/auth/setup-status", (c) => c.json({ needs_setup: false, registration_enabled: false }));
  app.get("/api/v1/auth/providers", (c) => c.json({ providers: [] }));

  // A login from another origin never gets here: every route's Origin check (origin.ts) answers
  // it with DeerFlow's 403 "Cross-site auth request denied.".
  app.post("/api/v1/auth/login/local", async (c) => {
    let form: URLSearchParams;
    try {
      form = new URLSearchParams(await c.req.text());
    } catch {
      form = new URLSearchParams();
    }
    const username = (form.get("username") ?? "").trim();
    const password = form.get("password") ?? "";
    if (!safeEqual(password, token)) {
      await new Promise((resolve) => setTimeout(resolve, FAILED_LOGIN_DELAY_MS));
      return c.json({ detail: { code: "invalid_credentials", message: "Incorrect email or password" } }, 401);
    }
    const user = looksLikeEmail(username) ? username : FALLBACK_USER;
    const expires = Math.floor(Date.now() / 1000) + SESSION_SECONDS;
    const secure = requestOrigin(c)?.startsWith("https://") ? ["Secure"] : [];
    const remember = form.get("remember_me") === "true" ? [`Max-Age=${SESSION_SECONDS}`] : [];
    c.header("Set-Cookie", cookie("access_token", signSession(token, user, expires), ["HttpOnly", "SameSite=Lax", ...remember, ...secure]), { append: true });
    c.header("Set-Cookie", cookie("csrf_token", randomBytes(24).toString("base64url"), ["SameSite=Strict", ...remember, ...secure]), { append: true });
    return c.json({ expires_in: SESSION_SECONDS, needs_setup: false });
  });

  app.get("/api/v1/auth/me", (c) => {
    const user = (c.get("sessionUser" as never) as string | undefined) ?? FALLBACK_USER;
    return c.json({ id: createHash("sha256").update(user).digest("hex").slice(0, 16), email: looksLikeEmail(user) ? user : FALLBACK_USER, system_role: "admin", needs_setup: false, oauth_provider: null });
  });

  app.post("/api/v1/auth/logout", (c) => {
    c.header("Set-Cookie", cookie("access_token", "", ["HttpOnly", "SameSite=Lax", "Max-Age=0"]), { append: true });
    c.header("Set-Cookie", cookie("csrf_token", "", ["SameSite=Strict", "Max-Age=0"]), { append: true });
    return c.json({ message: "Signed out." });
  });
}
