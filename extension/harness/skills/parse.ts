/**
 * Step 2 of the agentskills client guide: parse a SKILL.md, leniently, as users' files are.
 *
 * - Front matter: DeerFlow's fence (`frontmatter.py` `^---\s*\n(.*?)\n---\s*\n?`, found here by a
 *   linear scan, see splitSkillMarkdown), read with the `yaml` package as PyYAML's safe_load reads
 *   it (YAML 1.1, aliases bounded). Bounded first: at most MAX_FRONT_MATTER_BYTES, then at most
 *   MAX_FRONT_MATTER_KEYS keys, each refused with its own diagnostic before any value is read, so a
 *   hostile SKILL.md is reported broken in milliseconds and the other skills still load. A YAML error is
 *   reported with its line and, for an unquoted colon, DeerFlow's quoting hint (`parser.py`
 *   `_format_yaml_error`). That one case is also read as if the value were quoted (the guide's
 *   "quote fallback": `description: Use this: when …` is the most common broken skill), with a warning.
 * - `name` and `description` are required: no description → skipped; no name → the folder's,
 *   warned. A name over 64 characters, one that is not the spec's `[a-z0-9-]` form, one that is
 *   not the folder's, and a description over 1024 characters are warned and still loaded.
 * - `allowed-tools`: a YAML list (DeerFlow) or the spec's space/comma separated string (DeerFlow
 *   drops such a skill; here it loads). Claude Code's names (`Read`, `Bash(git:*)`) are mapped to
 *   this harness's tools, a command pattern widening to the whole tool with a warning (the field
 *   only ever restricts, see policy.ts).
 * - The other keys of the spec, DeerFlow and Claude Code are accepted; any other is reported (info).
 *
 * Pure: no I/O. Messages name no host path (the caller says where).
 */
import { isMap, isScalar, isSeq, parseDocument } from "yaml";
import type { SkillDiagnostic, SkillMeta } from "./types.js";

export const MAX_NAME_CHARS = 64;
export const MAX_DESCRIPTION_CHARS = 1024;
const MAX_COMPATIBILITY_CHARS = 500;
/** The spec's name grammar, which is also DeerFlow's `/skill` grammar (protocol/slashSkill.ts). */
export const SPEC_NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;

/**
 * The front matter's bounds (issue 31: a SKILL.md of 60,000 keys held the harness's event loop for
 * a minute in the `yaml` package's duplicate-key check, which compares each key with every earlier
 * one). Real front matter is a name (64 characters at most), a description (1,024), a
 * compatibility note (500), a few short lists and a small metadata map: under 1 KB and 20 keys in
 * the skills we ship as fixtures (anthropics/skills, DeerFlow's public ones), a few KB for Claude
 * Code's hooks. 64 KB and 1,000 keys (counted over every mapping, at any depth) leave dozens of
 * times that room, and bound what a hostile file costs to a linear parse of 64 KB (tens of ms).
 */
export const MAX_FRONT_MATTER_BYTES = 64 * 1024;
export const MAX_FRONT_MATTER_KEYS = 1000;

/** The opening fence: `---`, then blanks (a CR too) to the end of its line. */
const OPENING_FENCE = /^---[^\S\n]*\n/;

/** Keys read or accepted without a note: the spec's, DeerFlow's (`frontmatter.py`) and Claude Code's / VS Code's. */
const KNOWN_KEYS = new Set([
  "name", "description", "license", "compatibility", "metadata", "allowed-tools",
  "required-secrets", "secrets-autonomous", "version", "author",
  "disable-model-invocation", "user-invocable", "argument-hint", "context", "agent", "model", "hooks", "when_to_use", "disabled",
]);

/** Claude Code's tool names → this harness's (DeerFlow's) names. */
const CLAUDE_TOOL_NAMES: Record<string, string> = {
  Read: "read_file",
  Write: "write_file",
  Edit: "str_replace",
  MultiEdit: "str_replace",
  Bash: "bash",
  Grep: "grep",
  Glob: "glob",
  LS: "ls",
  Task: "task",
};

export interface ParsedSkill {
  /** Undefined when the skill cannot be loaded; `diagnostics` says why. */
  meta?: SkillMeta;
  diagnostics: SkillDiagnostic[];
}

const diag = (level: SkillDiagnostic["level"], code: string, message: string): SkillDiagnostic => ({ level, code, message });

interface YamlRead {
  data?: unknown;
  error?: { line?: number; message: string; code: string };
}

/** readYaml's code for a front matter over MAX_FRONT_MATTER_KEYS (not one of the `yaml` package's). */
const TOO_MANY_KEYS = "TOO_MANY_KEYS";

/** The 1-based line of `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = text.indexOf("\n"); i !== -1 && i < offset; i = text.indexOf("\n", i + 1)) line++;
  return line;
}

/**
 * The key bound and the duplicate-key check, in one pass over the parsed nodes (before toJS).
 * The `yaml` package's own check (`uniqueKeys`) scans a mapping's earlier keys for each new one:
 * quadratic, so it is off and this one keeps a Set per mapping. Same rule as the package's: two
 * scalar keys with the same value (`a` and `"a"` are one key, `1` and `"1"` two); an alias or a
 * collection as a key is never a duplicate. The error is the package's, at the first duplicate.
 *
 * DeerFlow reads front matter with PyYAML, which takes a duplicate key silently (the last wins);
 * this harness has always refused one, as the `yaml` package does by default: which of two
 * `description`s a reader takes differs between readers, so the file is reported, not guessed.
 */
function checkKeys(root: unknown, text: string): YamlRead["error"] {
  let keys = 0;
  let firstDuplicate: number | undefined;
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (isMap(node)) {
      keys += node.items.length;
      if (keys > MAX_FRONT_MATTER_KEYS) return { message: `The front matter has more than ${MAX_FRONT_MATTER_KEYS} keys`, code: TOO_MANY_KEYS };
      const seen = new Set<unknown>();
      for (const pair of node.items) {
        const key: unknown = pair.key;
        if (isScalar(key) && !Number.isNaN(key.value)) {
          if (seen.has(key.value)) {
            const at = key.range?.[0] ?? 0;
            if (firstDuplicate === undefined || at < firstDuplicate) firstDuplicate = at;
          }
          seen.add(key.value);
        }
        stack.push(pair.key, pair.value);
      }
    } else if (isSeq(node)) {
      for (const item of node.items) stack.push(item);
    }
  }
  // +1: the `---` fence line splitSkillMarkdown removed (DeerFlow's file line).
  return firstDuplicate === undefined ? undefined : { line: lineAt(text, firstDuplicate) + 1, message: "Map keys must be unique", code: "DUPLICATE_KEY" };
}

function readYaml(text: string): YamlRead {
  const doc = parseDocument(text, { version: "1.1", prettyErrors: true, uniqueKeys: false });
  const first = doc.errors[0];
  if (first) {
    // +1: 1-based; +1: the `---` fence splitSkillMarkdown removed (DeerFlow's file line).
    const line = first.linePos?.[0]?.line;
    return { error: { ...(line !== undefined ? { line: line + 1 } : {}), message: first.message.split("\n")[0]!.replace(/ at line \d+, column \d+:?$/, ""), code: first.code } };
  }
  const keyError = checkKeys(doc.contents, text);
  if (keyError) return { error: keyError };
  try {
    return { data: doc.toJS({ maxAliasCount: 100 }) as unknown };
  } catch (err) {
    return { error: { message: err instanceof Error ? err.message : String(err), code: "YAML_VALUE" } };
  }
}

/** `key: value: more` at the top level, the value not already quoted or structured. */
const UNQUOTED_COLON_LINE = /^([A-Za-z0-9_-]+):[ \t]+([^"'|>[{&*!%@`#\s].*)$/;

/** The guide's quote fallback: every top-level `key: a: b` line quoted. Undefined when no line needed it. */
function quoteColonValues(text: string): string | undefined {
  let changed = false;
  const lines = text.split("\n").map((line) => {
    const m = UNQUOTED_COLON_LINE.exec(line.replace(/\r$/, ""));
    if (!m || !/:(\s|$)/.test(m[2]!)) return line;
    changed = true;
    return `${m[1]}: "${m[2]!.trimEnd().replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  });
  return changed ? lines.join("\n") : undefined;
}

/** DeerFlow's hint for the offending line (`_format_yaml_error`). */
function quotingHint(text: string, fileLine: number | undefined): string {
  if (fileLine === undefined) return "";
  const offending = text.split("\n")[fileLine - 2];
  if (offending === undefined) return "";
  let hint = `\n  line ${fileLine}: ${offending.replace(/\r$/, "")}`;
  const m = UNQUOTED_COLON_LINE.exec(offending.replace(/\r$/, ""));
  if (m) hint += `\n  hint: values containing ":" must be quoted, e.g. ${m[1]}: "${m[2]!.trimEnd().replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`;
  return hint;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** Split the spec's string form on spaces and commas, keeping `Bash(git diff *)` whole. */
function splitToolList(text: string): string[] {
  const out: string[] = [];
  let current = "";
  let depth = 0;
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth = Math.max(0, depth - 1);
    if (depth === 0 && (ch === "," || /\s/.test(ch))) {
      if (current) out.push(current);
      current = "";
    } else current += ch;
  }
  if (current) out.push(current);
  return out;
}

function allowedTools(raw: unknown, diagnostics: SkillDiagnostic[]): readonly string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  let entries: unknown[];
  if (Array.isArray(raw)) entries = raw;
  else if (typeof raw === "string") entries = splitToolList(raw);
  else {
    diagnostics.push(diag("warning", "allowed_tools_invalid", "allowed-tools is neither a list nor a string of tool names; it is ignored (no restriction)"));
    return undefined;
  }
  const names = new Set<string>();
  for (const entry of entries) {
    if (typeof entry !== "string" || entry.trim() === "") {
      diagnostics.push(diag("warning", "allowed_tools_entry", `allowed-tools entry ${JSON.stringify(entry)} is not a tool name; it is ignored`));
      continue;
    }
    const text = entry.trim();
    const pattern = /^([A-Za-z_][\w-]*)\((.*)\)$/.exec(text);
    const base = pattern ? pattern[1]! : text;
    const name = CLAUDE_TOOL_NAMES[base] ?? base;
    if (pattern) {
      diagnostics.push(diag("warning", "allowed_tools_pattern", `allowed-tools entry ${text} is read as ${name}: argument patterns are not enforced here, the whole tool is allowed`));
    }
    names.add(name);
  }
  return [...names];
}

function requiredSecrets(raw: unknown, diagnostics: SkillDiagnostic[]): string[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    diagnostics.push(diag("warning", "required_secrets_invalid", "required-secrets is not a list; it is ignored"));
    return [];
  }
  const names: string[] = [];
  for (const item of raw) {
    const name = typeof item === "string" ? item.trim() : isRecord(item) && typeof item.name === "string" ? item.name.trim() : "";
    // DeerFlow's _ENV_VAR_NAME_RE: an invalid entry is dropped, the skill still loads.
    if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) names.push(name);
    else diagnostics.push(diag("warning", "required_secrets_entry", `required-secrets entry ${JSON.stringify(item)} is not an environment variable name; it is ignored`));
  }
  return [...new Set(names)];
}

function optionalBool(raw: unknown, key: string, fallback: boolean, diagnostics: SkillDiagnostic[]): boolean {
  if (raw === undefined || raw === null) return fallback;
  if (typeof raw === "boolean") return raw;
  diagnostics.push(diag("warning", "value_invalid", `${key} is not true or false; ${fallback} is used`));
  return fallback;
}

function scalarText(raw: unknown): string | undefined {
  if (typeof raw === "string") return raw.trim();
  if (typeof raw === "number" || typeof raw === "boolean") return String(raw);
  return undefined;
}

/**
 * Front matter and body of a SKILL.md (DeerFlow `split_skill_markdown`); undefined without a fence.
 * What `/^---\s*\n([\s\S]*?)\n---\s*(?:\n|$)/` matched, found without it: that regex backtracks
 * quadratically over whitespace (`---` then a megabyte of " \n" took minutes). The closing fence is
 * the first `\n---` whose following blanks reach the end or hold a newline; the body starts after
 * that run's last newline. One difference: blank lines right after the opening fence belong to the
 * front matter here (the regex skipped them), which YAML ignores and which keeps its line numbers
 * the file's.
 */
export function splitSkillMarkdown(text: string): { frontMatter: string; body: string } | undefined {
  const src = text.replace(/^\uFEFF/, "");
  const opening = OPENING_FENCE.exec(src);
  if (!opening) return undefined;
  const start = opening[0].length;
  for (let at = src.indexOf("\n---", start); at !== -1; at = src.indexOf("\n---", at + 1)) {
    let end = at + 4;
    let lastNewline = -1;
    for (; end < src.length && /\s/.test(src[end]!); end++) if (src[end] === "\n") lastNewline = end;
    if (end === src.length) return { frontMatter: src.slice(start, at), body: "" };
    if (lastNewline !== -1) return { frontMatter: src.slice(start, at), body: src.slice(lastNewline + 1) };
  }
  return undefined;
}

/** Parse one SKILL.md. `folderName`: the skill folder's name (the spec wants it to equal `name`). */
export function parseSkillMd(text: string, folderName: string): ParsedSkill {
  const diagnostics: SkillDiagnostic[] = [];
  const parts = splitSkillMarkdown(text);
  if (!parts) return { diagnostics: [diag("error", "frontmatter_missing", "No YAML frontmatter found (SKILL.md must start with a --- fenced block holding name and description)")] };
  const bytes = Buffer.byteLength(parts.frontMatter, "utf8");
  if (bytes > MAX_FRONT_MATTER_BYTES) {
    return { diagnostics: [diag("error", "frontmatter_too_large", `The front matter is ${bytes} bytes; at most ${MAX_FRONT_MATTER_BYTES} are read (the skill is not loaded)`)] };
  }

  let read = readYaml(parts.frontMatter);
  if (read.error?.code === TOO_MANY_KEYS) return { diagnostics: [diag("error", "frontmatter_too_many_keys", `${read.error.message}; at most ${MAX_FRONT_MATTER_KEYS} are read (the skill is not loaded)`)] };
  if (read.error) {
    const quoted = quoteColonValues(parts.frontMatter);
    const retry = quoted !== undefined ? readYaml(quoted) : undefined;
    if (retry && !retry.error) {
      diagnostics.push(diag("warning", "yaml_unquoted_colon", `Invalid YAML front-matter: ${read.error.message}${quotingHint(parts.frontMatter, read.error.line)}\n  (read as if the value were quoted)`));
      read = retry;
    } else {
      return { diagnostics: [diag("error", "yaml_invalid", `Invalid YAML front-matter: ${read.error.message}${quotingHint(parts.frontMatter, read.error.line)}`)] };
    }
  }
  if (!isRecord(read.data)) return { diagnostics: [...diagnostics, diag("error", "frontmatter_not_mapping", "Frontmatter must be a YAML dictionary")] };
  const fm = Object.fromEntries(Object.entries(read.data).map(([k, v]) => [String(k), v]));

  const description = scalarText(fm.description);
  if (!description) {
    return { diagnostics: [...diagnostics, diag("error", "description_missing", "The front matter has no description; a skill needs one to be offered (skipped)")] };
  }
  let name = scalarText(fm.name) ?? "";
  if (!name) {
    diagnostics.push(diag("warning", "name_missing", `The front matter has no name; the folder's name "${folderName}" is used`));
    name = folderName;
  }
  if (name.length > MAX_NAME_CHARS) diagnostics.push(diag("warning", "name_too_long", `The name is ${name.length} characters; the spec allows ${MAX_NAME_CHARS}`));
  if (!SPEC_NAME.test(name)) {
    diagnostics.push(diag("warning", "name_invalid", `The name "${name}" is not lowercase letters, digits and single hyphens: /${name} cannot activate it`));
  }
  if (name !== folderName) diagnostics.push(diag("warning", "name_mismatch", `The name "${name}" is not the folder's name "${folderName}"`));
  if (description.length > MAX_DESCRIPTION_CHARS) {
    diagnostics.push(diag("warning", "description_too_long", `The description is ${description.length} characters; the spec allows ${MAX_DESCRIPTION_CHARS}`));
  }

  const compatibility = scalarText(fm.compatibility);
  if (compatibility && compatibility.length > MAX_COMPATIBILITY_CHARS) {
    diagnostics.push(diag("warning", "compatibility_too_long", `compatibility is ${compatibility.length} characters; the spec allows ${MAX_COMPATIBILITY_CHARS}`));
  }
  let metadata: Record<string, string> | undefined;
  if (fm.metadata !== undefined && fm.metadata !== null) {
    if (isRecord(fm.metadata)) metadata = Object.fromEntries(Object.entries(fm.metadata).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]));
    else diagnostics.push(diag("warning", "metadata_invalid", "metadata is not a mapping; it is ignored"));
  }
  for (const key of Object.keys(fm)) {
    if (!KNOWN_KEYS.has(key)) diagnostics.push(diag("info", "key_unknown", `Front matter key "${key}" is not one this harness reads; it is ignored`));
  }
  const tools = allowedTools(fm["allowed-tools"], diagnostics);
  const license = scalarText(fm.license);
  const argumentHint = scalarText(fm["argument-hint"]);
  const meta: SkillMeta = {
    name,
    description,
    ...(license ? { license } : {}),
    ...(compatibility ? { compatibility } : {}),
    ...(metadata ? { metadata } : {}),
    ...(tools !== undefined ? { allowedTools: tools } : {}),
    requiredSecrets: requiredSecrets(fm["required-secrets"], diagnostics),
    disableModelInvocation: optionalBool(fm["disable-model-invocation"], "disable-model-invocation", false, diagnostics),
    userInvocable: optionalBool(fm["user-invocable"], "user-invocable", true, diagnostics),
    ...(argumentHint ? { argumentHint } : {}),
  };
  return { meta, diagnostics };
}
