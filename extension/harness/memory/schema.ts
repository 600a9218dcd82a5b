/**
 * The shape of long-term memory (DeerFlow `memory.json`, reference §9.1): three `user` sections,
 * three `history` sections, each `{summary, updatedAt}`, and discrete facts with a category and a
 * confidence. Validated on every read and every write: the file is the user's to edit (Open
 * Memory, or by hand), and a document that does not fit is refused with what is wrong, never
 * repaired or overwritten behind the user's back.
 *
 * Scope (issue 21; memory/scope.ts has the rules): what an extraction learns in a workspace stays
 * in that workspace unless the user promotes it.
 * - A fact's `scope` is "workspace" (injected only into threads of `workspace`, the real path of
 *   the folder it was extracted in) or "global" (every workspace: promoted by the user, or written
 *   by hand). `workspace` stays on a promoted fact as where it came from.
 * - `workspaces[<folder>]` holds the sections an extraction in that folder rewrote; a thread there
 *   sees them in place of the global `user`/`history` sections, which only the user changes.
 * Where DeerFlow has a shape we keep it: a DeerFlow or pre-scope `memory.json` (no `scope`, no
 * `workspaces`) reads as it is, its facts global (store.ts's readMemory migrates them).
 */
import { z } from "zod";

const SectionZ = z
  .object({
    summary: z.string(),
    /** ISO time of the last change; empty while the section was never written. */
    updatedAt: z.string(),
  })
  .strict();
export type MemorySection = z.infer<typeof SectionZ>;

const EMPTY_SECTION: MemorySection = { summary: "", updatedAt: "" };

/** DeerFlow's fact categories (memory_update prompt). */
export const FACT_CATEGORIES = ["preference", "knowledge", "context", "behavior", "goal", "correction"] as const;

export const FACT_SCOPES = ["workspace", "global"] as const;
export type FactScope = (typeof FACT_SCOPES)[number];

export const FactZ = z
  .object({
    id: z.string().min(1),
    content: z.string().min(1),
    category: z.enum(FACT_CATEGORIES),
    confidence: z.number().min(0).max(1),
    createdAt: z.string(),
    /** Where the fact came from: the thread id it was extracted from, or "user" for a hand edit. */
    source: z.string(),
    /** Where it is injected; absent (a DeerFlow or pre-scope document, a fact typed by hand) → global. */
    scope: z.enum(FACT_SCOPES).default("global"),
    /** The workspace folder it was extracted in (real path); required while the scope is "workspace". */
    workspace: z.string().min(1).optional(),
  })
  .strict()
  .refine((f) => f.scope !== "workspace" || f.workspace !== undefined, {
    message: 'a fact with scope "workspace" names its workspace folder ("workspace": "/path/to/folder"); use scope "global" for every workspace',
    path: ["workspace"],
  });
export type MemoryFact = z.output<typeof FactZ>;

const UserSectionsZ = z.object({ workContext: SectionZ, personalContext: SectionZ, topOfMind: SectionZ }).strict();
const HistorySectionsZ = z.object({ recentMonths: SectionZ, earlierContext: SectionZ, longTermBackground: SectionZ }).strict();

/** One workspace's own sections (an empty summary: that section falls back to the global one). */
export const WorkspaceSectionsZ = z.object({ user: UserSectionsZ, history: HistorySectionsZ }).strict();
export type WorkspaceSections = z.output<typeof WorkspaceSectionsZ>;

export const MemoryDocZ = z
  .object({
    version: z.literal("1.0"),
    lastUpdated: z.string(),
    user: UserSectionsZ,
    history: HistorySectionsZ,
    facts: z.array(FactZ),
    /** Sections extraction rewrote, by workspace folder (real path); absent → none. */
    workspaces: z.record(z.string().min(1), WorkspaceSectionsZ).default({}),
  })
  .strict();
export type MemoryDoc = z.output<typeof MemoryDocZ>;

export const USER_SECTIONS = ["workContext", "personalContext", "topOfMind"] as const;
export const HISTORY_SECTIONS = ["recentMonths", "earlierContext", "longTermBackground"] as const;

export type UserSection = (typeof USER_SECTIONS)[number];
export type HistorySection = (typeof HISTORY_SECTIONS)[number];

export function emptySections(): WorkspaceSections {
  return {
    user: { workContext: { ...EMPTY_SECTION }, personalContext: { ...EMPTY_SECTION }, topOfMind: { ...EMPTY_SECTION } },
    history: { recentMonths: { ...EMPTY_SECTION }, earlierContext: { ...EMPTY_SECTION }, longTermBackground: { ...EMPTY_SECTION } },
  };
}

export function emptyMemory(): MemoryDoc {
  return { version: "1.0", lastUpdated: "", ...emptySections(), facts: [], workspaces: {} };
}

/** A zod failure as one line a person can act on: `facts.0.confidence: Number must be ≤ 1; …`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}
