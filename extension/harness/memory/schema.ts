/**
 * The shape of long-term memory (DeerFlow `memory.json`, reference §9.1): three `user` sections,
 * three `history` sections, each `{summary, updatedAt}`, and discrete facts with a category and a
 * confidence. Validated on every read and every write: the file is the user's to edit (Open
 * Memory, or by hand), and a document that does not fit is refused with what is wrong, never
 * repaired or overwritten behind the user's back.
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

export const FactZ = z
  .object({
    id: z.string().min(1),
    content: z.string().min(1),
    category: z.enum(FACT_CATEGORIES),
    confidence: z.number().min(0).max(1),
    createdAt: z.string(),
    /** Where the fact came from: the thread id it was extracted from, or "user" for a hand edit. */
    source: z.string(),
  })
  .strict();
export type MemoryFact = z.infer<typeof FactZ>;

export const MemoryDocZ = z
  .object({
    version: z.literal("1.0"),
    lastUpdated: z.string(),
    user: z
      .object({ workContext: SectionZ, personalContext: SectionZ, topOfMind: SectionZ })
      .strict(),
    history: z
      .object({ recentMonths: SectionZ, earlierContext: SectionZ, longTermBackground: SectionZ })
      .strict(),
    facts: z.array(FactZ),
  })
  .strict();
export type MemoryDoc = z.infer<typeof MemoryDocZ>;

export const USER_SECTIONS = ["workContext", "personalContext", "topOfMind"] as const;
export const HISTORY_SECTIONS = ["recentMonths", "earlierContext", "longTermBackground"] as const;

export function emptyMemory(): MemoryDoc {
  return {
    version: "1.0",
    lastUpdated: "",
    user: { workContext: { ...EMPTY_SECTION }, personalContext: { ...EMPTY_SECTION }, topOfMind: { ...EMPTY_SECTION } },
    history: { recentMonths: { ...EMPTY_SECTION }, earlierContext: { ...EMPTY_SECTION }, longTermBackground: { ...EMPTY_SECTION } },
    facts: [],
  };
}

/** A zod failure as one line a person can act on: `facts.0.confidence: Number must be ≤ 1; …`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues.map((i) => `${i.path.join(".") || "(root)"}: ${i.message}`).join("; ");
}
