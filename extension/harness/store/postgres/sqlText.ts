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
