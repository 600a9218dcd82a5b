/**
 * Database URLs carry credentials: they never reach a log, an error message or the journal.
 * `postgres://user:secret@host/db` is shown as `postgres://user:***@host/db`; so is a URL of any
 * other scheme (`--database mysql://user:secret@…` is refused, and the refusal quotes it).
 */
export function redactUrl(text: string): string {
  return (
    text
      // The password runs to the LAST `@` of the authority (a password with an unencoded `@` in
      // it must not leave its tail behind), which ends at `/`, `?`, `#` or a space.
      .replace(/([a-z][a-z0-9+.-]*:\/\/[^:@/?#\s]*:)[^\s/?#]*@/gi, "$1***@")
      // libpq also takes credentials as query parameters (`?password=…`, `sslpassword`, `passfile` is a path).
      .replace(/([?&](?:password|sslpassword|pass|pwd|secret|token|api_?key)=)[^&#\s]*/gi, "$1***")
  );
}

export function isPostgresUrl(s: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(s);
}
