import { test } from "node:test";
import assert from "node:assert/strict";
import { dictionaryOf, joinRow, outgrown, packCheckpointRow, unpackCheckpointRow } from "../../../extension/harness/store/skeletonCodec.js";

const skeletonAt = (step: number) =>
  Buffer.from(JSON.stringify({ v: 4, channel_versions: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`branch:to:Node${i}.before_agent`, step + i])) }));
const refs = JSON.stringify({ messages: { m: [[1, 86]] }, title: { j: '"naïve title"' } });

test("a checkpoint row packs skeleton and refs into one deflated blob and unpacks them exactly", () => {
  const row = packCheckpointRow("json", joinRow(skeletonAt(1), refs));
  assert.equal(row.type, "json+deflate");
  assert.equal(row.channel_refs, "");
  const back = unpackCheckpointRow(row);
  assert.equal(back.type, "json");
  assert.deepEqual(Buffer.from(back.skeleton), skeletonAt(1));
  assert.equal(back.refsJson, refs);
});

test("with a thread's earlier row as dictionary a row shrinks further, and needs that dictionary to read", () => {
  const dict = dictionaryOf(joinRow(skeletonAt(1), refs));
  const joined = joinRow(skeletonAt(2), refs);
  const plain = packCheckpointRow("json", joined);
  const withDict = packCheckpointRow("json", joined, dict);
  assert.equal(withDict.type, `json+deflate@${dict.hash}`);
  assert.ok(withDict.checkpoint.byteLength < plain.checkpoint.byteLength / 2, `${withDict.checkpoint.byteLength} vs ${plain.checkpoint.byteLength}`);
  const back = unpackCheckpointRow(withDict, (h) => (h === dict.hash ? dict.bytes : undefined));
  assert.deepEqual(Buffer.from(back.skeleton), skeletonAt(2));
  assert.equal(back.refsJson, refs);
  assert.throws(() => unpackCheckpointRow(withDict), /dictionary .* is missing/);
  assert.equal(outgrown(dict, joined), false);
  assert.equal(outgrown(undefined, joined), true);
  assert.equal(outgrown(dict, Buffer.concat([joined, joined])), true, "a row far larger than the dictionary starts a new one");
});

test("a row written before deflation reads as it is", () => {
  const legacy = { type: "json", checkpoint: Buffer.from('{"v":4}'), channel_refs: '{"messages":{"m":[]}}' };
  const back = unpackCheckpointRow(legacy);
  assert.equal(back.type, "json");
  assert.equal(Buffer.from(back.skeleton).toString(), '{"v":4}');
  assert.equal(back.refsJson, '{"messages":{"m":[]}}');
});
