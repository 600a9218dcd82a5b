/**
 * The memory document on disk: `<dataDir>/memory/memory.json`, one per user (the data directory
 * is the user's: the CLI's `--data-dir`, the extension's global storage), never in a workspace,
 * which the sandbox can read and write.
 *
 * Rules this module owns (every entry point — extraction, `memory/set`, `memory clear`, the
 * injection — goes through it):
 * - every read is validated (schema.ts); a file that is not valid JSON or not memory-shaped is a
 *   `memory_invalid` error naming the file and what is wrong, and is never rewritten: an update
 *   that would start from it is refused, so a hand edit gone wrong loses nothing;
 * - every write is scrubbed of secret-looking values with the trust module's scrubber
 *   (sandbox/trust/secrets.ts), then validated, then written atomically (temp file + rename), so
 *   a crash leaves the old or the new document, never half of one;
 * - a file from before scopes (issue 21; DeerFlow's own shape) is read as it is: its facts are
 *   global, as they were, except an extracted one that reads as an instruction or permission
 *   (gate.ts), which is not carried over (it may have been planted, and was injected everywhere).
 *   The file itself changes at the next write.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";
import { HarnessError, errorMessage } from "../errors.js";
import { scrubSecrets } from "../sandbox/trust/secrets.js";
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
  return parseMemory(withoutLegacyInstructions(raw), file);
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
  const clean = parseMemory(scrubSecrets(doc), "the update");
  mkdirSync(memoryDir(dataDir), { recursive: true, mode: 0o700 });
  const file = memoryFile(dataDir);
  const tmp = `${file}.${randomUUID()}.tmp`;
  try {
    writeFileSync(tmp, `${JSON.stringify(clean, null, 2)}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
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

/** Forget everything: an empty document replaces whatever was there, broken or not. A new generation. */
export function clearMemory(dataDir: string): MemoryDoc {
  const doc = writeMemory(dataDir, emptyMemory());
  bumpMemoryGeneration(dataDir);
  return doc;
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
  const tmp = `${file}.${randomUUID()}.tmp`;
  try {
    writeFileSync(tmp, `${generation}\n`, { mode: 0o600 });
    renameSync(tmp, file);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw new HarnessError("storage", `Cannot write the memory generation ${file}: ${errorMessage(err)}`, { cause: err });
  }
  return generation;
}
