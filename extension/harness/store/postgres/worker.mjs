// The Postgres side of the synchronous driver (syncPg.ts): runs in a worker thread, owns ONE
// connection (so BEGIN … COMMIT issued by the main thread are one session), and answers each
// request on the MessagePort, then raises the shared flag the main thread is blocked on
// (Atomics.wait). Plain JavaScript so it loads the same under tsx, vitest and the dist bundle
// (esbuild bundles it, with pg, to dist/pgWorker.js).
import { workerData } from "node:worker_threads";
import pg from "pg";

const { url, flag, port, statementTimeoutMs, applicationName } = workerData;
const signal = new Int32Array(flag);

// BIGINT (epoch milliseconds, counts) as a number: every value we store fits in 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

function reply(message) {
  port.postMessage(message);
  Atomics.store(signal, 0, 1);
  Atomics.notify(signal, 0);
}

function errorOf(err) {
  return {
    message: err instanceof Error ? err.message : String(err),
    code: typeof err?.code === "string" ? err.code : undefined,
    constraint: typeof err?.constraint === "string" ? err.constraint : undefined,
    detail: typeof err?.detail === "string" ? err.detail : undefined,
  };
}

let client;
let broken;

async function connect() {
  client = new pg.Client({ connectionString: url, statement_timeout: statementTimeoutMs, application_name: applicationName });
  // A connection that dies between requests fails the next request with this error.
  client.on("error", (err) => {
    broken = err;
  });
  // A connection that ends under a running query may report it only to that query.
  client.on("end", () => {
    broken ??= new Error("The connection to Postgres ended.");
  });
  await client.connect();
}

port.on("message", async (req) => {
  if (req.type === "close") {
    try {
      await client?.end();
    } catch {
      /* closing anyway */
    }
    reply({ id: req.id, ok: true });
    port.close();
    return;
  }
  if (broken) {
    // The connection died (a server restart, a dropped socket). Outside a transaction the next
    // statement may go to a new connection; inside one it must not (what the transaction did is
    // gone with the connection, and its COMMIT on a fresh one would report success): it fails,
    // and so does the rest of that transaction, until the caller's next one starts afresh.
    if (req.inTx || /^\s*(COMMIT|ROLLBACK|RELEASE|SAVEPOINT)\b/i.test(req.sql)) return reply({ id: req.id, ok: false, error: errorOf(broken) });
    try {
      void client.end().catch(() => undefined);
      broken = undefined;
      await connect();
    } catch (err) {
      broken = err;
      return reply({ id: req.id, ok: false, error: errorOf(err) });
    }
  }
  try {
    // Named statements are parsed and planned once per connection; simple ones (exec) may hold
    // several statements and take no parameters.
    const query = () => (req.simple ? client.query(req.sql) : client.query({ name: req.name, text: req.sql, values: req.params }));
    let res;
    if (req.lock) {
      // A write outside a transaction: SQLite would take its write lock for it, so it runs in
      // one of its own under the same advisory lock an IMMEDIATE transaction takes (syncPg.ts).
      // One message from the main thread, four statements here on the loopback connection.
      await client.query(`BEGIN; SELECT pg_advisory_xact_lock(${req.lock})`);
      try {
        res = await query();
        await client.query("COMMIT");
      } catch (err) {
        await client.query("ROLLBACK").catch(() => undefined);
        throw err;
      }
    } else {
      res = await query();
    }
    const last = Array.isArray(res) ? res.at(-1) : res;
    reply({ id: req.id, ok: true, rows: last?.rows ?? [], rowCount: last?.rowCount ?? 0 });
  } catch (err) {
    // No SQLSTATE, or class 08: the connection itself failed, not the statement.
    if (typeof err?.code !== "string" || err.code.startsWith("08")) broken ??= err;
    reply({ id: req.id, ok: false, error: errorOf(err) });
  }
});

connect().then(
  () => reply({ id: 0, ok: true }),
  (err) => reply({ id: 0, ok: false, error: errorOf(err) }),
);
