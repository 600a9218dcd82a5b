// End to end: a real createAgent with a custom-reducer middleware on LinearSqliteSaver, against the
// scripted model server. Several turns (invoke and stream), then a new saver and a child process
// resume the thread with identical state; messages replaced and removed by id round-trip.
import { describe, it, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { HumanMessage } from "langchain";
import type { BaseMessage } from "@langchain/core/messages";
import { startModelServer, type ModelServer } from "../../fixtures/modelServer.js";
import { unpackCheckpointRow, type PackedRow } from "../../../extension/harness/store/skeletonCodec.js";
import { dictionaryIn } from "./agentFixture.js";
import { openDatabase } from "../../../extension/harness/store/db.js";
import type { Db } from "../../../extension/harness/store/sqlite/types.js";
import { LinearSqliteSaver } from "../../../extension/harness/store/checkpointer.js";
import { buildAgent, canonical, scriptReply } from "./agentFixture.js";

const childScript = fileURLToPath(new URL("./resumeChild.ts", import.meta.url));
const config = { configurable: { thread_id: "e2e" } };

async function history(agent: ReturnType<typeof buildAgent>) {
  const out: { id: unknown; next: string[]; values: unknown; metadata: unknown }[] = [];
  for await (const s of agent.graph.getStateHistory(config)) {
    out.push({ id: s.config.configurable?.checkpoint_id, next: [...s.next], values: await canonical(s.values), metadata: s.metadata });
  }
  return out;
}

describe("LinearSqliteSaver with createAgent", () => {
  let dir: string;
  let file: string;
  let server: ModelServer;
  const dbs: Db[] = [];
  const open = () => {
    const db = openDatabase(file);
    dbs.push(db);
    return db;
  };

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "deerflow-e2e-"));
    file = join(dir, "harness.db");
    server = await startModelServer({ script: (req) => scriptReply(req) });
  });
  after(async () => {
    for (const db of dbs) db.close();
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("runs turns, then resumes the thread with identical state in a new saver and in a child process", async () => {
    const agent = buildAgent(server.url, new LinearSqliteSaver(open()));
    const turns = ["hello", "tool", "replace", "two tools", "forget the first", "streamed tokens", "final words"];
    let firstHumanId: string | undefined;
    for (const [i, text] of turns.entries()) {
      if (i % 2 === 0) {
        await agent.graph.invoke({ messages: [new HumanMessage(text)] }, config);
      } else {
        // "messages" mode streams tokens: the model node then writes AIMessageChunks
        const streamMode = ["values", "messages", "updates"] as ("values" | "messages" | "updates")[];
        for await (const _ of await agent.graph.stream({ messages: [new HumanMessage(text)] }, { ...config, streamMode })) {
          // drain: persistence happens as the stream is consumed
        }
      }
      if (i === 0) firstHumanId = ((await agent.graph.getState(config)).values.messages as BaseMessage[])[0]?.id;
    }

    const state = await agent.graph.getState(config);
    const messages = state.values.messages as BaseMessage[];
    assert.ok(firstHumanId);
    assert.ok(!messages.some((m) => m.id === firstHumanId), "RemoveMessage removed the first human message");
    assert.ok(messages.some((m) => m.text === "replaced by id"), "afterModel replaced the answer by id");
    assert.ok(!messages.some((m) => m.text.startsWith("REPLACE")), "the replaced version is gone");
    assert.ok(messages.some((m) => m.text === "tool said echo: hi"), "the tool round trip is there");
    assert.equal(messages.at(-1)?.text, "answer to final words");
    assert.deepEqual(state.values.notes, [...new Set(state.values.notes)], "custom reducer de-duplicates");
    assert.ok(state.values.notes.length >= turns.length);

    const expected = await canonical(state.values);
    const expectedHistory = await history(agent);
    assert.ok(expectedHistory.length > turns.length * 3, `several checkpoints per turn (${expectedHistory.length})`);

    // A new saver on the same file (a restart in-process): same state, same full history.
    const resumed = buildAgent(server.url, new LinearSqliteSaver(open()));
    assert.deepEqual(await canonical((await resumed.graph.getState(config)).values), expected);
    assert.deepEqual(await history(resumed), expectedHistory);

    // A child process: same state, and its next turn appends to it.
    const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", childScript, file, server.url, "e2e"]);
    const [first, second] = stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, { messages: unknown[] }>);
    assert.deepEqual(first?.state, expected);
    const childMessages = second?.after?.messages ?? [];
    assert.equal(childMessages.length, messages.length + 2);

    // The parent sees the child's turn, and can continue from it.
    const seen = await resumed.graph.getState(config);
    assert.deepEqual(await canonical(seen.values), second?.after);
    const out = await resumed.graph.invoke({ messages: [new HumanMessage("back in the parent")] }, config);
    assert.equal(out.messages.at(-1)?.text, "answer to back in the parent");

    // Linear storage: every message version is stored once, however many checkpoints hold it,
    // and the latest checkpoint refers to the log with a range per edit in the middle (the replaced
    // answer; the removed first message only moves the start), not one per turn.
    const db = dbs[0]!;
    const latest = db.prepare("SELECT type, checkpoint, channel_refs FROM checkpoints WHERE thread_id = 'e2e' ORDER BY checkpoint_id DESC LIMIT 1").get() as PackedRow;
    const ranges = (JSON.parse(unpackCheckpointRow(latest, dictionaryIn(db)).refsJson) as { messages: { m: unknown[] } }).messages.m;
    assert.ok(ranges.length <= 2, `latest checkpoint uses ${ranges.length} ranges: ${JSON.stringify(ranges)}`);
    const dupes = db.prepare("SELECT message_id, hash, count(*) n FROM checkpoint_messages GROUP BY message_id, hash HAVING n > 1").all();
    assert.deepEqual(dupes, []);
    const rows = (db.prepare("SELECT count(*) n FROM checkpoint_messages").get() as { n: number }).n;
    const finalCount = out.messages.length;
    // final messages + the removed human + the replaced answer + id-less inputs written before the reducer gave them ids
    assert.ok(rows <= finalCount * 2 + 2, `${rows} log rows for ${finalCount} messages`);
  });
});
