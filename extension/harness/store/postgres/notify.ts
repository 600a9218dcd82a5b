/**
 * Fan-out across processes on Postgres (issue 26): every journaled event raises a NOTIFY on
 * `deerflow_events` (a trigger, postgres/migrations.ts, so no writer can forget it; Postgres
 * delivers it at COMMIT, after the row is visible). A process waiting on a run another process
 * executes (RunManager.waitForEnd: a stream, a join) LISTENs and re-reads the journal at once,
 * instead of at its next lease-bounded poll. That poll stays: it bounds the wait when a worker
 * dies silently, and covers a notification lost with a dropped connection.
 *
 * One LISTEN connection per database handle, open only while someone waits (the first
 * subscriber opens it, the last one's unsubscribe closes it): a one-shot CLI or a test that
 * never waits holds no connection, and nothing keeps the process alive after its work.
 */
import pg from "pg";

export const EVENTS_CHANNEL = "deerflow_events";

type Listener = (threadId: string) => void;

export class PostgresNotifications {
  private readonly listeners = new Set<Listener>();
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;

  constructor(private readonly url: string) {}

  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    if (!this.client) this.open();
    return () => {
      if (!this.listeners.delete(fn) || this.listeners.size > 0) return;
      const c = this.client;
      this.client = undefined;
      void c?.end().catch(() => undefined);
    };
  }

  private open(): void {
    const client = new pg.Client({ connectionString: this.url, application_name: "deerflow-listen" });
    this.client = client;
    client.on("notification", (n) => {
      for (const fn of [...this.listeners]) fn(n.payload ?? "");
    });
    // A dropped connection (a database restart): the waiters' poll carries on, and while anyone
    // still waits a new connection is tried every second until the database answers again.
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = undefined;
      void client.end().catch(() => undefined);
      if (this.listeners.size === 0 || this.retry) return;
      this.retry = setTimeout(() => {
        this.retry = undefined;
        if (this.listeners.size > 0 && !this.client) this.open();
      }, 1000);
      this.retry.unref();
    };
    client.on("error", lost);
    client.on("end", lost);
    client
      .connect()
      .then(() => client.query(`LISTEN ${EVENTS_CHANNEL}`))
      .catch(lost);
  }
}
