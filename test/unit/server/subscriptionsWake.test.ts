// Subscriptions on a database that announces other processes' events by thread (Postgres's
// NOTIFY, store/postgres/notify.ts): a notification naming a thread makes only that thread's
// subscriptions read the journal; one naming none wakes them all. A real SQLite store stands in for
// the database; its watchEvents hook is the test's, and events are written to the event store
// directly, as another process's appends would be (this process's journal never sees them).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openWorkspaceStore } from "../../../extension/harness/store/db.js";
import { openRunSystem } from "../../../extension/harness/runs/services.js";
import { createEventStore } from "../../../extension/harness/store/events.js";
import { Subscriptions } from "../../../extension/harness/server/subscriptions.js";
import type { OpenWorkspace } from "../../../extension/harness/server/workspaces.js";
import type { HarnessToHost } from "../../../extension/protocol/rpc.js";

test("a NOTIFY naming a thread wakes only that thread's subscriptions; one naming none wakes all", async () => {
  const root = mkdtempSync(join(tmpdir(), "deerflow-subs-"));
  const store = openWorkspaceStore({ dataDir: join(root, "data"), workspaceFolder: mkdtempSync(join(tmpdir(), "deerflow-subs-ws-")) });
  let notify: ((threadId: string) => void) | undefined;
  const db = Object.assign(Object.create(store.db) as typeof store.db, {
    watchEvents: (listener: (threadId: string) => void) => {
      notify = listener;
      return () => (notify = undefined);
    },
  });
  const manager = openRunSystem(store);
  const ws: OpenWorkspace = { hostPath: store.workspaceFolder, folder: store.workspaceFolder, store: { ...store, db }, manager, clearing: new Set() };
  const a = store.threads.create({}).threadId;
  const b = store.threads.create({}).threadId;
  const sent: HarnessToHost["events/event"][] = [];
  let delivered: () => void = () => undefined;
  const subs = new Subscriptions((p) => {
    sent.push(p);
    delivered();
  });
  const subA = subs.subscribe(ws, a, 0);
  const subB = subs.subscribe(ws, b, 0);
  assert.ok(notify, "the subscriptions listen to the database's notifications");
  const reads: string[] = [];
  const events = manager.journal.events;
  const list = events.list.bind(events);
  events.list = (threadId, o) => {
    reads.push(threadId);
    return list(threadId, o);
  };
  const other = createEventStore(store.db);
  const next = () => new Promise<void>((resolve) => (delivered = resolve));

  other.append(a, "run-a", "custom", { n: 1 });
  other.append(b, "run-b", "custom", { n: 1 });
  let got = next();
  notify(a);
  await got;
  assert.deepEqual(reads, [a], "only thread a's subscription read");
  assert.deepEqual(sent.map((p) => p.subscriptionId), [subA]);

  got = next();
  notify("");
  await got;
  assert.deepEqual(reads.slice(1).sort(), [a, b].sort(), "a notification without a thread wakes every subscription");
  assert.deepEqual(sent.map((p) => p.subscriptionId), [subA, subB], "b's event arrives; a's is not sent twice");
  subs.unsubscribeAll();
  assert.equal(notify, undefined, "the last unsubscribe stops listening");
  store.close();
});
