// LangGraph's checkpoint-saver conformance suite (@langchain/langgraph-checkpoint-validation) is
// written for Vitest with globals (describe/it/expect); it runs here, on whichever SQLite driver
// the runtime chooses (better-sqlite3 on Node 20, node:sqlite on Node 24: see scripts/test.mjs).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    globals: true,
    include: ["test/conformance/**/*.spec.ts"],
    // One file, many short tests against temp SQLite files: no need for worker isolation.
    pool: "threads",
    reporters: ["default"],
    // The one exemption LangGraph itself makes for its stock savers (MemorySaver, SqliteSaver,
    // MongoDBSaver: it_skipForSomeModules in the suite's put.ts), for the same reason: a put
    // returns the checkpoint's full channel_values, not only the channels named in newVersions.
    // Storage still holds each value once (content-addressed per thread, messages in one log),
    // which is what the test is after; LangGraph reads a checkpoint whole either way.
    testNamePattern: /^(?!.*should only store channel_values that have changed \(based on newVersions\)).*$/,
  },
});
