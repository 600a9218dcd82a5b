/**
 * The stores write SQLite's parameters (`?` positional, `@name` from one object); Postgres numbers
 * them (`$1`). Rewritten once per statement text, outside quoted strings and identifiers.
 */
export interface ParamPlan {
  /** The statement with `$n` parameters. */
  readonly sql: string;
  /** The stores' arguments, as Postgres' positional values. */
  bind(params: readonly unknown[]): unknown[];
}

export function rewriteParams(sql: string): ParamPlan {
  let out = "";
  let positional = 0;
  const named: string[] = [];
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]!;
    if (c === "'" || c === '"') {
      const end = sql.indexOf(c, i + 1);
      const stop = end === -1 ? sql.length : end + 1;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "?") {
      out += `$${++positional}`;
    } else if (c === "@" && /[A-Za-z_]/.test(sql[i + 1] ?? "")) {
      const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(sql.slice(i + 1))!;
      let n = named.indexOf(m[0]);
      if (n === -1) n = named.push(m[0]) - 1;
      out += `$${n + 1}`;
      i += m[0].length;
    } else {
      out += c;
    }
  }
  if (positional > 0 && named.length > 0) throw new TypeError(`A statement mixes ? and @name parameters: ${sql}`);
  if (named.length === 0) return { sql: out, bind: (p) => p.map(toParam) };
  return {
    sql: out,
    bind: (p) => {
      const o = (p[0] ?? {}) as Record<string, unknown>;
      return named.map((k) => toParam(o[k]));
    },
  };
}

/** undefined is SQL NULL (as better-sqlite3 binds it); bytes go as Buffers (pg sends them as BYTEA). */
function toParam(v: unknown): unknown {
  if (v === undefined) return null;
  if (v instanceof Uint8Array && !Buffer.isBuffer(v)) return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
  return v;
}

/**
 * The primary keys SQLite's `INSERT OR REPLACE` replaces on, per table the stores upsert into.
 * SQLite replaces on ANY unique constraint; these tables have no other, so an upsert on the
 * primary key is the same statement. A table missing here is refused loudly, never guessed.
 */
const REPLACE_KEYS: Readonly<Record<string, readonly string[]>> = {
  checkpoints: ["thread_id", "checkpoint_ns", "checkpoint_id"],
  checkpoint_writes: ["thread_id", "checkpoint_ns", "checkpoint_id", "task_id", "idx"],
  schema_migrations: ["version"],
};

const INSERT_OR = /^\s*INSERT\s+OR\s+(IGNORE|REPLACE)\s+INTO\s+([A-Za-z_][A-Za-z0-9_]*)\s*\(([^)]*)\)([\s\S]*)$/i;

/**
 * SQLite's `INSERT OR IGNORE` and `INSERT OR REPLACE` in Postgres' spelling (`ON CONFLICT`); any
 * other statement is returned unchanged. The stores' other SQLite-only spellings are chosen by
 * `db.dialect` where they are written (threads.ts, events.ts, deleteThread.ts, checkpointer.ts).
 */
export function translateSqlite(sql: string): string {
  const m = INSERT_OR.exec(sql);
  if (!m) return sql;
  const [, verb, table, columnList, rest] = m as unknown as [string, string, string, string, string];
  const head = `INSERT INTO ${table} (${columnList})${rest.trimEnd()}`;
  if (verb.toUpperCase() === "IGNORE") return `${head} ON CONFLICT DO NOTHING`;
  const key = REPLACE_KEYS[table];
  if (!key) throw new TypeError(`INSERT OR REPLACE INTO ${table}: no conflict key is known for it on Postgres (postgres/sqlText.ts).`);
  const columns = columnList.split(",").map((c) => c.trim());
  const set = columns.filter((c) => !key.includes(c)).map((c) => `${c} = EXCLUDED.${c}`);
  return `${head} ON CONFLICT (${key.join(", ")}) DO ${set.length ? `UPDATE SET ${set.join(", ")}` : "NOTHING"}`;
}

/** Whether a statement only reads (so it needs no write lock outside a transaction). */
export function isReadOnly(sql: string): boolean {
  return /^\s*(SELECT|SHOW|VALUES)\b/i.test(sql);
}
