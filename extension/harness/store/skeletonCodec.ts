/**
 * Checkpoint rows, deflated against a per-thread dictionary. A row's skeleton (the checkpoint
 * without its channel values) is mostly `channel_versions` and `versions_seen` keyed by the
 * chain's node names, and its channel references repeat the same channel names and value hashes:
 * ~1.9 KB of JSON written after every superstep (≈9 per turn), nearly identical from one step to
 * the next. Deflated alone it takes ~620 bytes; deflated with an earlier row of the same thread
 * as the preset dictionary, ~290. That keeps the whole data directory within its growth goal
 * (issue 12) without dropping the per-step checkpoints crash recovery resumes from.
 *
 * Layout: `type` = "<serde type>+deflate" (no dictionary) or "<serde type>+deflate@<sha256>";
 * `checkpoint` = deflate(skeleton bytes, NUL, refs JSON) (JSON text never holds a raw NUL, so the
 * split is unambiguous); `channel_refs` = "" (the refs are in the blob). The dictionary is itself
 * a stored value of the thread (checkpoint_values, type "zdict", content-addressed), so it is
 * deleted with the thread. Rows written before (plain "json", refs in their column) read as they
 * are. Synchronous on purpose (~100 µs): the refs are known only inside the write transaction,
 * and an async deflate would let concurrent puts of one thread reach the message log out of order.
 */
import { createHash } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";

const SUFFIX = "+deflate";
const NUL = 0;
export const DICTIONARY_TYPE = "zdict";

export interface PackedRow {
  type: string;
  checkpoint: Uint8Array;
  channel_refs: string;
}

export interface Dictionary {
  hash: string;
  bytes: Uint8Array;
}

/** The bytes a row stores (before deflation): skeleton, NUL, refs. Also what a new dictionary is made of. */
export function joinRow(skeleton: Uint8Array, refsJson: string): Buffer {
  return Buffer.concat([skeleton, Buffer.of(NUL), Buffer.from(refsJson, "utf8")]);
}

export function dictionaryOf(joined: Uint8Array): Dictionary {
  return { hash: createHash("sha256").update(joined).digest("hex"), bytes: joined };
}

/**
 * Whether a thread's dictionary should be replaced by this row: its first rows (a thread's first
 * steps) have few channels yet, so a row much larger than the dictionary says the thread has
 * grown past it. A thread settles on one or two dictionaries.
 */
export function outgrown(dict: Dictionary | undefined, joined: Uint8Array): boolean {
  return !dict || joined.byteLength > dict.bytes.byteLength * 1.5;
}

export function packCheckpointRow(type: string, joined: Uint8Array, dict?: Dictionary): PackedRow {
  const checkpoint = deflateRawSync(joined, dict ? { level: 3, dictionary: dict.bytes } : { level: 3 });
  return { type: `${type}${SUFFIX}${dict ? `@${dict.hash}` : ""}`, checkpoint, channel_refs: "" };
}

/** The dictionary a stored row was deflated with, if any. */
export function dictionaryHashOf(type: string): string | undefined {
  const at = type.lastIndexOf(`${SUFFIX}@`);
  return at < 0 ? undefined : type.slice(at + SUFFIX.length + 1);
}

/** The skeleton's serde type and bytes, and the refs JSON, from a stored row (either layout). */
export function unpackCheckpointRow(
  row: PackedRow,
  dictionary: (hash: string) => Uint8Array | undefined = () => undefined,
): { type: string; skeleton: Uint8Array; refsJson: string } {
  const at = row.type.lastIndexOf(SUFFIX);
  if (at < 0) return { type: row.type, skeleton: row.checkpoint, refsJson: row.channel_refs };
  const hash = dictionaryHashOf(row.type);
  const dict = hash === undefined ? undefined : dictionary(hash);
  if (hash !== undefined && !dict) throw new Error(`a checkpoint row's dictionary ${hash.slice(0, 12)}… is missing`);
  const joined = inflateRawSync(row.checkpoint, dict ? { dictionary: dict } : {});
  const nul = joined.indexOf(NUL);
  if (nul < 0) throw new Error("a deflated checkpoint row without its refs");
  return { type: row.type.slice(0, at), skeleton: joined.subarray(0, nul), refsJson: joined.subarray(nul + 1).toString("utf8") };
}
