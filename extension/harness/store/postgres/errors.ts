/**
 * Postgres SQLSTATEs as the SQLite codes the stores branch on (stores/threads.ts and runs.ts
 * tell a duplicate primary key from another unique index), so one store serves both databases.
 */
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
      return sqlstate.startsWith("08") ? "SQLITE_IOERR" : "SQLITE_ERROR";
  }
}
