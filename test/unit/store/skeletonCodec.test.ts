import { test } from "node:test";
import assert from "node:assert/strict";
import { packCheckpointRow, unpackCheckpointRow } from "../../../extension/harness/store/skeletonCodec.js";

test("a checkpoint row packs skeleton and refs into one deflated blob and unpacks them exactly", () => {
  const skeleton = Buffer.from(JSON.stringify({ v: 4, channel_versions: Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`branch:to:Node${i}.before_agent`, i])) }));
  const refs = JSON.stringify({ messages: { m: [[1, 86]] }, title: { j: '"naïve \\u0000-free title"' } });
  const row = packCheckpointRow("json", skeleton, refs);
  assert.equal(row.type, "json+deflate");
  assert.equal(row.channel_refs, "");
  assert.ok(row.checkpoint.byteLength < (skeleton.byteLength + refs.length) / 2, "repetitive JSON shrinks");
  const back = unpackCheckpointRow(row);
  assert.equal(back.type, "json");
  assert.deepEqual(Buffer.from(back.skeleton), skeleton);
  assert.equal(back.refsJson, refs);
});

test("a row written before deflation reads as it is", () => {
  const legacy = { type: "json", checkpoint: Buffer.from('{"v":4}'), channel_refs: '{"messages":{"m":[]}}' };
  const back = unpackCheckpointRow(legacy);
  assert.equal(back.type, "json");
  assert.equal(Buffer.from(back.skeleton).toString(), '{"v":4}');
  assert.equal(back.refsJson, '{"messages":{"m":[]}}');
});
