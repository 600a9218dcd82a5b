// Child process of checkpointer.e2e.test.ts: a fresh process opens the same database with a new
// saver, prints the thread's state, runs one more turn, and prints the result (JSON lines on stdout).
import { HumanMessage } from "langchain";
import { openDatabase } from "../../../extension/harness/store/db.js";
import { LinearSqliteSaver } from "../../../extension/harness/store/checkpointer.js";
import { buildAgent, canonical } from "./agentFixture.js";

const [file, baseURL, threadId] = process.argv.slice(2);
if (!file || !baseURL || !threadId) throw new Error("usage: resumeChild.ts <db file> <model url> <thread id>");
const db = openDatabase(file);
try {
  const agent = buildAgent(baseURL, new LinearSqliteSaver(db));
  const config = { configurable: { thread_id: threadId } };
  const before = await agent.graph.getState(config);
  process.stdout.write(JSON.stringify({ state: await canonical(before.values) }) + "\n");
  await agent.graph.invoke({ messages: [new HumanMessage("from the child")] }, config);
  // the stored state, not the live one: live objects carry explicit `undefined` fields that no
  // serializer round-trip (ours or the stock saver's) preserves
  const after = await agent.graph.getState(config);
  process.stdout.write(JSON.stringify({ after: await canonical(after.values) }) + "\n");
} finally {
  db.close();
}
