/**
 * DeerFlow's ThreadState reducers (`thread_state.py` merge_*), as pure functions.
 *
 * LangGraph applies every write of a superstep through the channel's reducer in task order,
 * so parallel tool calls (two `present_files` in one model turn) merge deterministically here.
 * Every reducer is idempotent for a re-applied identical update, which keeps them safe even if a
 * caller re-feeds saved state (the createAgent `invoke` gotcha in the langchain recipe).
 */

export interface SandboxState {
  sandbox_id?: string | null;
}

/** Metadata of an image the agent viewed. The bytes live in the blob store under `sha256`. */
export interface ViewedImage {
  mime_type: string;
  size: number;
  /** Content hash (hex) of the bytes in the blob store. */
  sha256: string;
}

export type TodoStatus = "pending" | "in_progress" | "completed";
export interface Todo {
  content: string;
  status: TodoStatus;
}

export class ConflictingSandboxError extends Error {
  readonly code = "conflicting_sandbox";
  constructor(existing: string, next: string) {
    super(`Conflicting sandbox state updates: ${existing} != ${next}`);
    this.name = "ConflictingSandboxError";
  }
}

/**
 * `None` keeps; an unset side adopts the other; equal ids (both absent included) keep the existing
 * value; two different ids in one step are a bug (two sandboxes for one thread) and raise.
 */
export function mergeSandbox(
  existing: SandboxState | null | undefined,
  next: SandboxState | null | undefined,
): SandboxState | null | undefined {
  if (next == null) return existing;
  if (existing == null) return next;
  const a = existing.sandbox_id ?? null;
  const b = next.sandbox_id ?? null;
  if (a === b) return existing;
  if (a === null) return next;
  if (b === null) return existing;
  throw new ConflictingSandboxError(a, b);
}

/** Ordered union keeping the first occurrence: `["a","b"] + ["b","c"] → ["a","b","c"]`. */
export function mergeArtifacts(existing: readonly string[] | null | undefined, next: readonly string[] | null | undefined): string[] {
  if (next == null) return existing ? [...existing] : [];
  if (existing == null) return [...new Set(next)];
  return [...new Set([...existing, ...next])];
}

/** Merge by path (a newer entry for a path wins); an empty `{}` update is the explicit "clear all". */
export function mergeViewedImages(
  existing: Readonly<Record<string, ViewedImage>> | null | undefined,
  next: Readonly<Record<string, ViewedImage>> | null | undefined,
): Record<string, ViewedImage> {
  if (next == null) return { ...(existing ?? {}) };
  if (Object.keys(next).length === 0) return {};
  return { ...(existing ?? {}), ...next };
}

/** `None` keeps (nodes that do not touch todos must not wipe them, DeerFlow #3123); `[]` clears; a list replaces. */
export function mergeTodos(existing: Todo[] | null | undefined, next: Todo[] | null | undefined): Todo[] | null | undefined {
  if (next == null) return existing;
  return next;
}

/** Deferred tools the model fetched with `tool_search` (issue 23; mcp/deferred.ts), for one catalog. */
export interface PromotedTools {
  readonly catalog_hash: string;
  readonly names: readonly string[];
}

/**
 * DeerFlow's `merge_promoted`: no update keeps what is there; another catalog's hash replaces it
 * whole (a persisted bare name must never expose a different tool after the catalog drifted);
 * the same hash unions the names, order kept, duplicates dropped.
 */
export function mergePromoted(existing: PromotedTools | null | undefined, next: PromotedTools | null | undefined): PromotedTools | null {
  if (!next) return existing ?? null;
  if (!existing || existing.catalog_hash !== next.catalog_hash) return { catalog_hash: next.catalog_hash, names: [...new Set(next.names)] };
  return { catalog_hash: existing.catalog_hash, names: [...new Set([...existing.names, ...next.names])] };
}
