/**
 * Database URLs carry credentials: they never reach a log, an error message or the journal.
 * `postgres://user:secret@host/db` is shown as `postgres://user:***@host/db`.
 */
export function redactUrl(text: string): string {
  return text.replace(/(postgres(?:ql)?:\/\/[^:@/\s]*:)[^@\s]*@/gi, "$1***@");
}

export function isPostgresUrl(s: string): boolean {
  return /^postgres(?:ql)?:\/\//i.test(s);
}
