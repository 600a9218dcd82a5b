/**
 * The memory document's rules, and its home in a data directory: `<dataDir>/memory/memory.json`,
 * one per user (the data directory is the user's: the CLI's `--data-dir`, the extension's global
 * storage), never in a workspace, which the sandbox can read and write. On Postgres (`deerflow
 * serve --database`) the document is a row instead (pgDocument.ts), behind the same
 * MemoryDocumentStore; storage.ts picks one.
 *
 * Rules this module owns (every entry point — extraction, `memory/set`, `memory clear`, the
 * injection — goes through it, whichever store holds the document):
 * - every read is validated (schema.ts); a document that is not valid JSON or not memory-shaped
 *   is a `memory_invalid` error naming where it is and what is wrong, and is never rewritten: an
 *   update that would start from it is refused, so a hand edit gone wrong loses nothing;
 * - every write is scrubbed of secret-looking values with the trust module's scrubber
 *   (trust/secrets.ts), then validated (`cleanForWrite`), then written atomically (trust/atomicWrite.ts:
 *   temp file, fsync, rename, so a crash leaves the old or the new document, never half of one);
 * - a document from before scopes (issue 21; DeerFlow's own shape) is read as it is (`parseStored`):
 *   its facts are global, as they were, except an extracted one that reads as an instruction or
 *   permission (gate.ts), which is not carried over (it may have been planted, and was injected
 *   everywhere). What is stored changes at the next write;
 * - the version (what the editor shows as the document's mtime) and the generation (changed by an
 *   explicit user change only) below.
 */
import { existsSync, mkdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { HarnessError, errorMessage } from "../errors.js";
import { writeFileAtomic, writeJsonAtomic } from "../trust/atomicWrite.js";
import { scrubSecrets } from "../trust/secrets.js";
import { MemoryDocZ, describeIssues, emptyMemory, type MemoryDoc } from "./schema.js";
import { readsAsInstruction } from "./gate.js";

export function memoryDir(dataDir: string): string {
  return join(dataDir, "memory");
}

export function memoryFile(dataDir: string): string {
  return join(memoryDir(dataDir), "memory.json");
}

/** Validates a document from anywhere (the file, `memory/set`); throws `memory_invalid` with zod's issues. */
export function parseMemory(raw: unknown, source: string): MemoryDoc {
  const parsed = MemoryDocZ.safeParse(raw);
  if (!parsed.success) throw new HarnessError("memory_invalid", `The memory in ${source} is not valid: ${describeIssues(parsed.error)}`);
  return parsed.data;
}

/**
 * Where the memory document lives: this data directory's memory.json (FileMemoryDocument), or a
 * Postgres database's row (pgDocument.ts). storage.ts chooses; memory/service.ts, the harness
 * server and the CLI use only this.
 */
export interface MemoryDocumentStore {
  /** Where it is, for messages: the file, or the database (without its password). */
  readonly location: string;
  /** The stored memory, validated; an empty document when none was written yet. */
  read(): MemoryDoc;
  /** Which version is stored (the editor's mtime, see memoryVersion); 0 before the first write. */
  version(): number;
  /** The generation (see memoryGeneration); "0" before the first explicit user change. */
  generation(): string;
  /** A whole document from the user (memory/set, clear): scrubbed, validated, stored; a new generation. */
  replace(doc: MemoryDoc): MemoryDoc;
  /**
   * Read-modify-write: `change` is given the stored document and returns the next one (undefined:
   * nothing to write). `change` and `then` (run after the write) are synchronous, so nothing of
   * this process runs in between; on Postgres they run in one transaction under the database's
   * write lock, so no other process's write lands in between either. `userChange`: an explicit
   * user change (a new generation). Returns what is stored.
   */
  update(change: (doc: MemoryDoc) => MemoryDoc | undefined, o?: { userChange?: boolean; then?: (stored: MemoryDoc) => void }): MemoryDoc;
}

/**
 * The data directory's memory.json. Its read-modify-write has no lock of its own: only the
 * processor lease's holder extracts (queue.ts), and the other writers are the user's own commands.
 */
export class FileMemoryDocument implements MemoryDocumentStore {
  constructor(readonly dataDir: string) {}

  get location(): string {
    return memoryFile(this.dataDir);
  }

  read(): MemoryDoc {
    return readMemory(this.dataDir);
  }

  version(): number {
    return memoryVersion(this.dataDir);
  }

  generation(): string {
    return memoryGeneration(this.dataDir);
  }

  replace(doc: MemoryDoc): MemoryDoc {
    const stored = writeMemory(this.dataDir, doc);
    bumpMemoryGeneration(this.dataDir);
    return stored;
  }

  update(change: (doc: MemoryDoc) => MemoryDoc | undefined, o: { userChange?: boolean; then?: (stored: MemoryDoc) => void } = {}): MemoryDoc {
    const current = readMemory(this.dataDir);
    const next = change(current);
    if (next === undefined) return current;
    const stored = writeMemory(this.dataDir, next);
    if (o.userChange) bumpMemoryGeneration(this.dataDir);
    o.then?.(stored);
    return stored;
  }
}

/** A stored document's parsed JSON, from any store: a pre-scope one's planted instructions left out (see the header), then validated. */
export function parseStored(raw: unknown, source: string): MemoryDoc {
  return parseMemory(withoutLegacyInstructions(raw), source);
}

/** What any store writes: scrubbed of secret-looking values, then validated. */
export function cleanForWrite(doc: MemoryDoc): MemoryDoc {
  return parseMemory(scrubSecrets(doc), "the update");
}

/** The stored memory; an empty document when none was written yet. */
export function readMemory(dataDir: string): MemoryDoc {
  const file = memoryFile(dataDir);
  if (!existsSync(file)) return emptyMemory();
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (err) {
    throw new HarnessError("memory_invalid", `The memory file ${file} is not valid JSON (${errorMessage(err)}). Fix it or run "deerflow memory clear"; it is left as it is.`);
  }
  return parseStored(raw, file);
}

/**
 * A pre-scope file's facts (no `scope` yet) that an extraction wrote (`source` is a thread, not
 * "user") and that read as instructions are left out; everything else is read unchanged.
 */
function withoutLegacyInstructions(raw: unknown): unknown {
  if (!raw || typeof raw !== "object" || !Array.isArray((raw as { facts?: unknown }).facts)) return raw;
  const facts = (raw as { facts: unknown[] }).facts;
  const legacyInstruction = (f: unknown): boolean => {
    if (!f || typeof f !== "object" || "scope" in f) return false;
    const { source, content } = f as { source?: unknown; content?: unknown };
    return source !== "user" && typeof content === "string" && readsAsInstruction(content) !== undefined;
  };
  return facts.some(legacyInstruction) ? { ...raw, facts: facts.filter((f) => !legacyInstruction(f)) } : raw;
}

/** Scrubbed, validated, written atomically. Returns what was stored. */
export function writeMemory(dataDir: string, doc: MemoryDoc): MemoryDoc {
  const clean = cleanForWrite(doc);
  mkdirSync(memoryDir(dataDir), { recursive: true, mode: 0o700 });
  const file = memoryFile(dataDir);
  try {
    writeJsonAtomic(file, clean, { mode: 0o600 });
  } catch (err) {
    throw new HarnessError("storage", `Cannot write the memory file ${file}: ${errorMessage(err)}`, { cause: err });
  }
  return clean;
}

/**
 * Which version of the memory file is stored: its modification time (0 before the first write).
 * The editor's file system reports it as the document's mtime, so a save over a document the
 * harness rewrote meanwhile (an extraction) is a save conflict, not a silent overwrite.
 */
export function memoryVersion(dataDir: string): number {
  try {
    return statSync(memoryFile(dataDir)).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * The memory's generation: changed by an explicit user change only (`memory clear`, Forget, a
 * document saved with `memory/set`), never by an extraction. A thread's memory snapshot
 * (DynamicContext) records the generation it was rendered at and is rendered again when it
 * changed, so forgotten facts stop reaching the provider in older threads too, while an
 * extraction never changes an existing thread's prefix. A sidecar (`memory/generation`), so the
 * DeerFlow-shaped document stays as it is; "0" before the first explicit change.
 */
export function memoryGenerationFile(dataDir: string): string {
  return join(memoryDir(dataDir), "generation");
}

export function memoryGeneration(dataDir: string): string {
  try {
    return readFileSync(memoryGenerationFile(dataDir), "utf8").trim() || "0";
  } catch {
    return "0";
  }
}

export function bumpMemoryGeneration(dataDir: string): string {
  const generation = randomUUID();
  mkdirSync(memoryDir(dataDir), { recursive: true, mode: 0o700 });
  const file = memoryGenerationFile(dataDir);
  try {
    writeFileAtomic(file, `${generation}\n`, { mode: 0o600 });
  } catch (err) {
    throw new HarnessError("storage", `Cannot write the memory generation ${file}: ${errorMessage(err)}`, { cause: err });
  }
  return generation;
}
