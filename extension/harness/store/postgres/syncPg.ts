/**
 * The Postgres driver behind the synchronous `Db` seam (issue 26).
 *
 * Why synchronous: every store, the journal's replay-then-follow contract (runs/journal.ts) and
 * the run system's transactions are synchronous, on both SQLite drivers, and the SQLite path is
 * the one most users run: making it async end to end would cost every caller and the SQLite hot
 * path. Postgres clients are asynchronous, so this driver runs `pg` (pure JavaScript: no native
 * build, the same on Node 20 and 24) in a worker thread with ONE connection, and the calling
 * thread blocks on a shared flag (Atomics.wait) until the worker has the answer. The cost is one
 * loopback round trip per statement during which this thread does nothing else; `deerflow serve`
 * is the only user, and several serve processes share the load (README, "deerflow serve").
 * pg-native's querySync was the other candidate: it compiles libpq bindings per Node ABI, and
 * one node_modules cannot hold the Node 20 and Node 24 builds at once.
 *
 * What it makes Postgres look like to the stores: `?` and `@name` parameters, rows as plain
 * objects with BYTEA as Buffer and BIGINT as number, errors as SqliteError with SQLite's codes
 * (a unique violation is SQLITE_CONSTRAINT_UNIQUE, or _PRIMARYKEY on a primary key), nested
 * transactions as savepoints, IMMEDIATE as one database-wide advisory lock (SQLite's single
 * writer, across every process on the database).
 */
import { MessageChannel, Worker, receiveMessageOnPort, type MessagePort } from "node:worker_threads";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { HarnessError } from "../../errors.js";
import { SqliteError, type Db, type RunResult, type Statement, type TransactionMode } from "../sqlite/types.js";
import { TransactionRunner } from "../sqlite/transaction.js";
import { isReadOnly, rewriteParams, translateSqlite, type ParamPlan } from "./sqlText.js";
import { sqliteCodeOf } from "./errors.js";
import { redactUrl } from "./url.js";
import { PostgresNotifications } from "./notify.js";

/** The key of the advisory lock an IMMEDIATE transaction takes ("deerflow" in ASCII, as a bigint). */
const WRITE_LOCK_KEY = "7229717520616794743";
const DEFAULT_STATEMENT_TIMEOUT_MS = 30_000;

interface WireError {
  message: string;
  code?: string;
  constraint?: string;
  detail?: string;
}
type Reply = { id: number; ok: true; rows?: Record<string, unknown>[]; rowCount?: number } | { id: number; ok: false; error: WireError };

/** The worker script: next to this file in the sources (tsx, vitest), `pgWorker.js` beside the bundle. */
function workerUrl(): URL {
  const here = import.meta.url;
  const source = new URL("./worker.mjs", here);
  if (existsSync(fileURLToPath(source))) return source;
  return new URL("./pgWorker.js", here);
}

function toBuffer(v: unknown): unknown {
  return v instanceof Uint8Array && !Buffer.isBuffer(v) ? Buffer.from(v.buffer, v.byteOffset, v.byteLength) : v;
}

function plainRow<R>(row: Record<string, unknown>): R {
  for (const k in row) row[k] = toBuffer(row[k]);
  return row as R;
}

class PgStatement<P extends unknown[], R> implements Statement<P, R> {
  constructor(
    private readonly db: PostgresDb,
    private readonly plan: ParamPlan,
    private readonly name: string,
    private readonly readOnly: boolean,
  ) {}
  private query(params: P): Reply & { ok: true } {
    // Outside a transaction a write takes the write lock, as it does on SQLite (worker.mjs).
    const lock = this.readOnly || this.db.inTransaction ? undefined : WRITE_LOCK_KEY;
    return this.db.request({ sql: this.plan.sql, name: this.name, params: this.plan.bind(params), lock });
  }
  run(...params: P): RunResult {
    return { changes: this.query(params).rowCount ?? 0, lastInsertRowid: 0 };
  }
  get(...params: P): R | undefined {
    const row = this.query(params).rows?.[0];
    return row ? plainRow<R>(row) : undefined;
  }
  all(...params: P): R[] {
    return (this.query(params).rows ?? []).map((r) => plainRow<R>(r));
  }
  iterate(...params: P): IterableIterator<R> {
    return this.all(...params)[Symbol.iterator]();
  }
}

export interface PostgresOptions {
  /** Per-statement limit on the server (a lock wait included): nothing waits forever. */
  statementTimeoutMs?: number;
  applicationName?: string;
}

export class PostgresDb implements Db {
  readonly driver = "postgres" as const;
  readonly dialect = "postgres" as const;
  readonly file: string;
  private readonly worker: Worker;
  private readonly port: MessagePort;
  private readonly signal: Int32Array;
  private readonly waitMs: number;
  private readonly tx: TransactionRunner;
  private readonly names = new Map<string, string>();
  private readonly plans = new Map<string, ParamPlan>();
  private nextId = 1;
  private closed = false;
  private readonly notifications: PostgresNotifications;

  private constructor(url: string, o: PostgresOptions) {
    this.file = redactUrl(url);
    this.notifications = new PostgresNotifications(url);
    const statementTimeoutMs = o.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
    this.waitMs = statementTimeoutMs + 10_000;
    const flag = new SharedArrayBuffer(4);
    this.signal = new Int32Array(flag);
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(workerUrl(), {
      workerData: { url, flag, port: port2, statementTimeoutMs, applicationName: o.applicationName ?? "deerflow" },
      transferList: [port2],
      // The URL may carry a password: the worker's environment needs nothing of ours.
      env: {},
      // Plain JavaScript: no loader of the parent's (tsx under tests) needs to start with it.
      execArgv: [],
    });
    // Neither the worker nor its port may keep the process alive: close() ends them.
    this.worker.unref();
    this.port.unref();
    this.tx = new TransactionRunner({
      exec: (sql) => this.exec(sql),
      nativeInTransaction: () => undefined,
      begin: (mode) =>
        mode === "immediate" ? `BEGIN; SELECT pg_advisory_xact_lock(${WRITE_LOCK_KEY})` : "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    });
  }

  /** Connects (blocking until the server answers) or throws HarnessError("storage") saying why. */
  static open(url: string, o: PostgresOptions = {}): PostgresDb {
    const db = new PostgresDb(url, o);
    const hello = db.await(0);
    if (!hello.ok) {
      db.terminate();
      throw new HarnessError("storage", `Cannot connect to the Postgres database ${db.file}: ${redactUrl(hello.error.message)}`);
    }
    return db;
  }

  /** Blocks until the reply with `id` arrives (earlier replies of abandoned requests are skipped). */
  private await(id: number): Reply {
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const m = receiveMessageOnPort(this.port);
      if (m) {
        const reply = m.message as Reply;
        if (reply.id === id) return reply;
        continue;
      }
      const left = deadline - Date.now();
      if (left <= 0) throw new SqliteError(`Postgres did not answer within ${this.waitMs} ms.`, "SQLITE_BUSY");
      Atomics.wait(this.signal, 0, 0, left);
      Atomics.store(this.signal, 0, 0);
    }
  }

  /** One statement, answered synchronously; an error is thrown as SqliteError. */
  request(req: { sql: string; name?: string; params?: unknown[]; simple?: boolean; lock?: string }): Reply & { ok: true } {
    if (this.closed) throw new SqliteError("The Postgres connection is closed.", "SQLITE_MISUSE");
    const id = this.nextId++;
    Atomics.store(this.signal, 0, 0);
    // inTx: whether the worker may replace a dead connection for this statement (worker.mjs).
    this.port.postMessage({ id, ...req, inTx: this.tx.active });
    const reply = this.await(id);
    if (!reply.ok) {
      const e = reply.error;
      throw new SqliteError(e.message, sqliteCodeOf(e.code, e.constraint), { cause: { pgcode: e.code, constraint: e.constraint, detail: e.detail } });
    }
    return reply;
  }

  exec(sql: string): void {
    this.request({ sql, simple: true });
  }

  prepare<P extends unknown[] = unknown[], R = unknown>(sql: string): Statement<P, R> {
    let plan = this.plans.get(sql);
    if (!plan) this.plans.set(sql, (plan = rewriteParams(translateSqlite(sql))));
    let name = this.names.get(plan.sql);
    if (!name) this.names.set(plan.sql, (name = `df${this.names.size + 1}`));
    return new PgStatement<P, R>(this, plan, name, isReadOnly(plan.sql));
  }

  transaction<T>(mode: TransactionMode, fn: () => T): T {
    return this.tx.run(mode, fn);
  }

  /** Called with the thread id of each event another connection journals (LISTEN/NOTIFY). */
  watchEvents(listener: (threadId: string) => void): () => void {
    return this.notifications.subscribe(listener);
  }

  pragma(name: string): unknown {
    throw new SqliteError(`PRAGMA ${name}: Postgres has no pragmas.`, "SQLITE_MISUSE");
  }

  get inTransaction(): boolean {
    return this.tx.active;
  }

  close(): void {
    if (this.closed) return;
    try {
      const id = this.nextId++;
      this.port.postMessage({ id, type: "close" });
      this.await(id);
    } catch {
      /* closing anyway */
    }
    this.terminate();
  }

  private terminate(): void {
    this.closed = true;
    this.port.close();
    void this.worker.terminate();
  }
}
