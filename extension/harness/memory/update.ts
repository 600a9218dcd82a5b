/**
 * The extraction model's answer → a memory update (DeerFlow `_parse_memory_update_response` and
 * `_normalize_memory_update_data`, deermem/core/updater.py). The answer is model output: untrusted,
 * and often messy. What is kept is the valid part of it, not all or nothing:
 * - the update object is picked out of whatever surrounds it (a thinking trace, prose, a fence,
 *   other JSON objects before it): every `{` is tried as the start of a JSON object, in order;
 *   the first object with DeerFlow's keys (`user`, `history`, `newFacts`) wins, else the first
 *   one with a usable update key (a `newFacts`/`factsToRemove` list, a `user`/`history` object).
 *   Truncated or malformed JSON is not repaired;
 * - fields of the wrong type are dropped one by one (a section that is not an object, a fact
 *   without text, a removal without an id); numbers given as text are read (`"confidence":
 *   "0.95"`), booleans and words are not; an unknown category becomes "context"; a fact without
 *   a confidence gets DeerFlow's 0.5 (so it is below the threshold);
 * - DeerFlow's safety rule: removals together with a malformed new fact fail the whole update, so
 *   a "replace X by Y" whose Y was lost never turns into a plain delete of X.
 * What is stored from it is decided later, by the gate (gate.ts) and the scope rules (scope.ts).
 */
import { FACT_CATEGORIES, HISTORY_SECTIONS, USER_SECTIONS, type HistorySection, type MemoryFact, type UserSection } from "./schema.js";

export class ExtractionError extends Error {
  override name = "ExtractionError";
}

/** DeerFlow's labels on an entry (deermem's scope gate), kept for the gate; never stored. */
export interface EntryLabels {
  scope?: string;
  durability?: string;
  authority?: string;
}

export interface SectionUpdate extends EntryLabels {
  summary: string;
}

export interface NewFact extends EntryLabels {
  content: string;
  category: MemoryFact["category"];
  confidence: number;
}

export interface MemoryUpdate {
  /** Sections the model asked to rewrite (`shouldUpdate` and a non-empty summary). */
  user: Partial<Record<UserSection, SectionUpdate>>;
  history: Partial<Record<HistorySection, SectionUpdate>>;
  newFacts: NewFact[];
  /** Ids of facts to remove. */
  factsToRemove: string[];
  /** Entries of the answer left out as malformed (for the log). */
  malformed: number;
}

/** The scan is bounded: a model answer is small, and a crafted one must not stall the harness. */
const MAX_ANSWER_CHARS = 100_000;
const MAX_CANDIDATES = 200;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** The index of the `}` closing the object that opens at `start`, strings and escapes respected; -1 when it never closes. */
function closingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) return c === "}" ? i : -1;
      if (depth < 0) return -1;
    }
  }
  return -1;
}

const hasSections = (v: unknown, keys: readonly string[]): boolean => isObj(v) && keys.some((k) => k in v);
const isFullUpdate = (o: Obj): boolean => "user" in o && "history" in o && "newFacts" in o;
const isPartialUpdate = (o: Obj): boolean =>
  Array.isArray(o.newFacts) || Array.isArray(o.factsToRemove) || hasSections(o.user, USER_SECTIONS) || hasSections(o.history, HISTORY_SECTIONS);

/** The model's answer as an update; ExtractionError when no update object can be found in it. */
export function parseUpdate(answer: string): MemoryUpdate {
  const text = answer.length > MAX_ANSWER_CHARS ? answer.slice(0, MAX_ANSWER_CHARS) : answer;
  let fallback: Obj | undefined;
  let sawObject = false;
  let tried = 0;
  for (let at = text.indexOf("{"); at >= 0 && tried < MAX_CANDIDATES; at = text.indexOf("{", at + 1)) {
    tried++;
    const end = closingBrace(text, at);
    if (end < 0) continue;
    let value: unknown;
    try {
      value = JSON.parse(text.slice(at, end + 1));
    } catch {
      continue;
    }
    if (!isObj(value)) continue;
    sawObject = true;
    if (isFullUpdate(value)) return normalizeUpdate(value);
    if (!fallback && isPartialUpdate(value)) fallback = value;
  }
  if (fallback) return normalizeUpdate(fallback);
  throw new ExtractionError(
    sawObject ? "the memory model's answer holds no memory update (no object with user, history, newFacts or factsToRemove)" : "the memory model's answer holds no JSON object",
  );
}

const label = (v: unknown): string | undefined => (typeof v === "string" && v.trim() ? v.trim().toLowerCase() : undefined);

function labels(o: Obj): EntryLabels {
  const out: EntryLabels = {};
  const scope = label(o.scope);
  const durability = label(o.durability);
  const authority = label(o.authority);
  if (scope) out.scope = scope;
  if (durability) out.durability = durability;
  if (authority) out.authority = authority;
  return out;
}

/** `true`/`"true"`: DeerFlow reads shouldUpdate as truthy; a string "false" must not count as yes. */
const says = (v: unknown): boolean => v === true || (typeof v === "string" && v.trim().toLowerCase() === "true");

function sectionUpdates<K extends string>(raw: unknown, keys: readonly K[]): { updates: Partial<Record<K, SectionUpdate>>; malformed: number } {
  const updates: Partial<Record<K, SectionUpdate>> = {};
  let malformed = 0;
  if (raw === undefined || raw === null) return { updates, malformed };
  if (!isObj(raw)) return { updates, malformed: 1 };
  for (const k of keys) {
    const s = raw[k];
    if (s === undefined || s === null) continue;
    if (!isObj(s)) {
      malformed++;
      continue;
    }
    if (!says(s.shouldUpdate)) continue;
    if (typeof s.summary !== "string" || !s.summary.trim()) {
      malformed++;
      continue;
    }
    updates[k] = { summary: s.summary.trim(), ...labels(s) };
  }
  return { updates, malformed };
}

/** DeerFlow `_normalize_memory_update_fact`: a fact, or undefined when it cannot be one. */
function normalizeFact(raw: unknown): NewFact | undefined {
  if (!isObj(raw) || typeof raw.content !== "string" || !raw.content.trim()) return undefined;
  let confidence: number;
  const c = raw.confidence;
  if (c === undefined || c === null) confidence = 0.5;
  else if (typeof c === "number") confidence = c;
  else if (typeof c === "string" && c.trim() !== "" && Number.isFinite(Number(c.trim()))) confidence = Number(c.trim());
  else return undefined; // a boolean, a word, an object
  if (!Number.isFinite(confidence)) return undefined;
  const category = typeof raw.category === "string" && (FACT_CATEGORIES as readonly string[]).includes(raw.category.trim()) ? (raw.category.trim() as MemoryFact["category"]) : "context";
  return { content: raw.content.trim(), category, confidence, ...labels(raw) };
}

function normalizeUpdate(o: Obj): MemoryUpdate {
  const user = sectionUpdates(o.user, USER_SECTIONS);
  const history = sectionUpdates(o.history, HISTORY_SECTIONS);
  const newFacts: NewFact[] = [];
  let droppedFact = false;
  if (o.newFacts !== undefined && o.newFacts !== null) {
    if (!Array.isArray(o.newFacts)) droppedFact = true;
    else {
      for (const raw of o.newFacts as unknown[]) {
        const f = normalizeFact(raw);
        if (f) newFacts.push(f);
        else droppedFact = true;
      }
    }
  }
  const factsToRemove: string[] = [];
  let malformedRemovals = 0;
  if (Array.isArray(o.factsToRemove)) {
    for (const r of o.factsToRemove as unknown[]) {
      const id = typeof r === "string" ? r.trim() : isObj(r) && typeof r.id === "string" ? r.id.trim() : "";
      if (id) factsToRemove.push(id);
      else malformedRemovals++;
    }
  } else if (o.factsToRemove !== undefined && o.factsToRemove !== null) malformedRemovals++;
  if (factsToRemove.length > 0 && droppedFact) {
    throw new ExtractionError("the memory model's answer removes facts while one of its new facts is malformed (an unsafe partial update); nothing was applied");
  }
  const newFactsMalformed = Array.isArray(o.newFacts) ? (o.newFacts as unknown[]).length - newFacts.length : droppedFact ? 1 : 0;
  return {
    user: user.updates,
    history: history.updates,
    newFacts,
    factsToRemove,
    malformed: user.malformed + history.malformed + newFactsMalformed + malformedRemovals,
  };
}
