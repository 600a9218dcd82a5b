/**
 * Content-addressed bytes (viewed images). Checkpoints keep only metadata and the sha256
 * (ARCHITECTURE.md: image bytes never live in checkpoints); the bytes are read back here when
 * the next model request is built, then dropped.
 */
import { createHash } from "node:crypto";
import type { Db } from "./sqlite/types.js";

export interface StoredBlob {
  bytes: Buffer;
  mime: string;
  size: number;
}

export interface BlobStore {
  /** Stores the bytes once and returns their sha256 (lowercase hex). Idempotent. */
  put(bytes: Uint8Array, mime: string): string;
  get(sha256: string): StoredBlob | undefined;
  has(sha256: string): boolean;
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

export function createBlobStore(db: Db): BlobStore {
  // Conflict policy: IGNORE. The key is the hash of the bytes, so an existing row already holds
  // exactly these bytes; the first mime type recorded wins (the same bytes are the same image).
  const insert = db.prepare(
    "INSERT OR IGNORE INTO blobs (sha256, mime_type, size, bytes, created_at) VALUES (?, ?, ?, ?, ?)",
  );
  const select = db.prepare<[string], { bytes: Buffer; mime_type: string; size: number }>(
    "SELECT bytes, mime_type, size FROM blobs WHERE sha256 = ?",
  );
  const exists = db.prepare<[string], { one: number }>("SELECT 1 AS one FROM blobs WHERE sha256 = ?");
  return {
    put(bytes, mime) {
      const hash = sha256Hex(bytes);
      insert.run(hash, mime, bytes.byteLength, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), Date.now());
      return hash;
    },
    get(hash) {
      const row = select.get(hash);
      return row ? { bytes: row.bytes, mime: row.mime_type, size: row.size } : undefined;
    },
    has(hash) {
      return exists.get(hash) !== undefined;
    },
  };
}
