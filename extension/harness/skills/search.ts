/**
 * DeerFlow's catalogue search (`skills/catalog.py` SkillCatalog.search, the query forms of
 * `tool_search`): `select:a,b` (exact names, no cap), `+prefix rest` (the name must contain
 * `prefix`, ranked by `rest`), or a case-insensitive regular expression over name and description
 * (a name match ranks above a description match), falling back to a literal match when the
 * pattern does not compile; at most 5 results.
 *
 * The pattern is the model's: it runs in the grep regex worker with its deadline
 * (sandbox/regexWorker.ts), never on the harness's event loop, so `(a+)+b` cannot freeze it; a
 * pattern past the deadline matches nothing.
 */
import { RegexMatcher, RegexTimeoutError, REGEX_BATCH_MAX_TEXTS } from "../sandbox/regexWorker.js";
import type { Skill } from "./types.js";

export const MAX_RESULTS = 5;

function compiled(pattern: string): { source: string; flags: string } {
  try {
    new RegExp(pattern, "i");
    return { source: pattern, flags: "i" };
  } catch {
    return { source: pattern.replace(/[.*+?^${}()|[\]\\/-]/g, "\\$&"), flags: "i" };
  }
}

/** Per text (one line each), whether the pattern matches; all false when it ran out of time. */
async function matches(pattern: string, texts: readonly string[], signal?: AbortSignal): Promise<boolean[]> {
  const { source, flags } = compiled(pattern);
  const matcher = new RegexMatcher(source, flags);
  const out: boolean[] = [];
  try {
    for (let i = 0; i < texts.length; i += REGEX_BATCH_MAX_TEXTS) {
      const batch = texts.slice(i, i + REGEX_BATCH_MAX_TEXTS).map((t) => t.replace(/[\r\n]+/g, " "));
      const hits = await matcher.match(batch, batch.length, signal);
      for (const h of hits) out.push(h.length > 0);
    }
    return out;
  } catch (err) {
    if (err instanceof RegexTimeoutError) return texts.map(() => false);
    throw err;
  } finally {
    matcher.close();
  }
}

const searchable = (s: Skill) => `${s.meta.name} ${s.meta.description}`;

export async function searchSkills(skills: readonly Skill[], query: string, signal?: AbortSignal): Promise<Skill[]> {
  const q = query.trim();
  if (!q) return [];
  if (q.startsWith("select:")) {
    const wanted = new Set(q.slice(7).split(",").map((n) => n.trim()));
    return skills.filter((s) => wanted.has(s.meta.name));
  }
  if (q.startsWith("+")) {
    const parts = q.slice(1).trim().split(/\s+(.*)/s);
    const required = (parts[0] ?? "").toLowerCase();
    if (!required) return [];
    const candidates = skills.filter((s) => s.meta.name.toLowerCase().includes(required));
    const rest = (parts[1] ?? "").trim();
    if (!rest) return candidates.slice(0, MAX_RESULTS);
    const hit = await matches(rest, candidates.map(searchable), signal);
    return candidates.map((s, i) => ({ s, score: hit[i] ? 1 : 0, i })).sort((a, b) => b.score - a.score || a.i - b.i).map((x) => x.s).slice(0, MAX_RESULTS);
  }
  const [inText, inName] = await Promise.all([matches(q, skills.map(searchable), signal), matches(q, skills.map((s) => s.meta.name), signal)]);
  return skills
    .map((s, i) => ({ s, i, score: inText[i] ? (inName[i] ? 2 : 1) : 0 }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.i - b.i)
    .map((x) => x.s)
    .slice(0, MAX_RESULTS);
}
