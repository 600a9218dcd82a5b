/**
 * Checkpoint rows, deflated. A row's skeleton (the checkpoint without its channel values) is
 * mostly `channel_versions` and `versions_seen` keyed by the chain's node names, and its channel
 * references repeat the same channel names and value hashes: together ~1.9 KB of repetitive JSON,
 * written after every superstep (≈9 per turn). Deflated together they take about a third of that,
 * which keeps the whole data directory within its growth goal (issue 12) without dropping the
 * per-step checkpoints crash recovery resumes from.
 *
 * Layout: `type` = "<serde type>+deflate"; `checkpoint` = deflate(skeleton bytes, NUL, refs JSON)
 * (a JSON text never holds a raw NUL, so the split is unambiguous); `channel_refs` = "" (the refs
 * are in the blob). Rows written before (plain "json", refs in their column) read as they are.
 * Synchronous on purpose (~100 µs): the refs are known only inside the write transaction, and an
 * async deflate would let concurrent puts of one thread reach the message log out of order.
 */
import { deflateRawSync, inflateRawSync } from "node:zlib";

const SUFFIX = "+deflate";
const NUL = 0;

export interface PackedRow {
  type: string;
  checkpoint: Uint8Array;
  channel_refs: string;
}

export function packCheckpointRow(type: string, skeleton: Uint8Array, refsJson: string): PackedRow {
  const refs = Buffer.from(refsJson, "utf8");
  const joined = Buffer.concat([skeleton, Buffer.of(NUL), refs]);
  return { type: type + SUFFIX, checkpoint: deflateRawSync(joined, { level: 3 }), channel_refs: "" };
}

/** The skeleton's serde type and bytes, and the refs JSON, from a stored row (either layout). */
export function unpackCheckpointRow(row: PackedRow): { type: string; skeleton: Uint8Array; refsJson: string } {
  if (!row.type.endsWith(SUFFIX)) return { type: row.type, skeleton: row.checkpoint, refsJson: row.channel_refs };
  const joined = inflateRawSync(row.checkpoint);
  const at = joined.indexOf(NUL);
  if (at < 0) throw new Error("a deflated checkpoint row without its refs");
  return { type: row.type.slice(0, -SUFFIX.length), skeleton: joined.subarray(0, at), refsJson: joined.subarray(at + 1).toString("utf8") };
}
