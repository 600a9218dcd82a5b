/**
 * Postgres SQLSTATEs as the SQLite codes the stores branch on (stores/threads.ts and runs.ts
 * tell a duplicate primary key from another unique index), so one store serves both databases.
 */
const NODE_SOCKET_ERROR = /^E[A-Z]+$/;

export function sqliteCodeOf(sqlstate: string | undefined, constraint: string | undefined): string {
  switch (sqlstate) {
    case "23505":
      return constraint?.endsWith("_pkey") ? "SQLITE_CONSTRAINT_PRIMARYKEY" : "SQLITE_CONSTRAINT_UNIQUE";
    case "23503":
      return "SQLITE_CONSTRAINT_FOREIGNKEY";
    case "23514":
      return "SQLITE_CONSTRAINT_CHECK";
    case "23502":
      return "SQLITE_CONSTRAINT_NOTNULL";
    case "40001": // serialization failure
    case "40P01": // deadlock detected
    case "55P03": // lock not available
    case "57014": // statement timeout / cancelled
      return "SQLITE_BUSY";
    case undefined:
      return "SQLITE_IOERR"; // no SQLSTATE: the connection itself failed
    default:
      // Class 08 (connection exceptions), 57P (the server shutting down), or not an SQLSTATE at
      // all but Node's socket error (ECONNREFUSED, ECONNRESET, ETIMEDOUT): the connection failed.
      return sqlstate.startsWith("08") || sqlstate.startsWith("57P") || NODE_SOCKET_ERROR.test(sqlstate) ? "SQLITE_IOERR" : "SQLITE_ERROR";
  }
}

/**
 * The database did not answer (Postgres down, restarting, the connection refused or dropped):
 * a statement failed for the connection, not for what it asked. Serve answers 503 for these, and
 * the run system's background loops retry them (runs/sweep.ts, RunManager.startHeartbeat).
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  if (!(err instanceof Error) || err.name !== "SqliteError") return false;
  const code = (err as { code?: unknown }).code;
  const pgcode = (err.cause as { pgcode?: unknown } | undefined)?.pgcode;
  if (code !== "SQLITE_IOERR") return false;
  return pgcode === undefined || (typeof pgcode === "string" && (pgcode.startsWith("08") || pgcode.startsWith("57P") || NODE_SOCKET_ERROR.test(pgcode)));
}
