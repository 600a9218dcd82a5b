/**
 * The shape of a shell command line, as far as the command audit (commandAudit.ts) needs it:
 * its pipelines, each pipeline's stages, and the bodies of its substitutions. Quote-aware and
 * nesting-aware, so `echo "a;b"` stays one command and `x=$(a | b)` stays one stage.
 *
 * Not a shell parser: heredoc bodies are read as commands (a heredoc that writes a script
 * naming `rm -rf /` is audited like the command itself), and an unbalanced quote keeps the rest
 * of the line together instead of guessing. Both err towards auditing more text, never less.
 */

/** `;`, `&&`, `||`, `&` and newlines separate pipelines; `|` and `|&` separate stages. */
export type Pipeline = string[];

export interface Substitution {
  readonly kind: "$(" | "`" | "<(" | ">(";
  readonly body: string;
}

interface Scan {
  pipelines: Pipeline[];
  substitutions: Substitution[];
}

/** Top-level pipelines and substitutions; nested substitutions are found by scanning a body again. */
export function scanShell(command: string): Scan {
  const pipelines: Pipeline[] = [];
  const substitutions: Substitution[] = [];
  let stages: string[] = [];
  let current = "";
  const endStage = (): void => {
    if (current.trim() !== "") stages.push(current.trim());
    current = "";
  };
  const endPipeline = (): void => {
    endStage();
    if (stages.length > 0) pipelines.push(stages);
    stages = [];
  };

  let i = 0;
  while (i < command.length) {
    const ch = command[i] as string;
    const next = command[i + 1];
    if (ch === "\\") {
      current += command.slice(i, i + 2);
      i += 2;
    } else if (ch === "'") {
      const end = command.indexOf("'", i + 1);
      const stop = end < 0 ? command.length : end + 1;
      current += command.slice(i, stop);
      i = stop;
    } else if (ch === '"') {
      const stop = closeDoubleQuote(command, i + 1, substitutions);
      current += command.slice(i, stop);
      i = stop;
    } else if ((ch === "$" || ch === "<" || ch === ">") && next === "(") {
      const end = closeParen(command, i + 2);
      if (ch !== "$" || command[i + 2] !== "(") {
        substitutions.push({ kind: `${ch}(` as Substitution["kind"], body: command.slice(i + 2, end) });
      }
      current += command.slice(i, end + 1);
      i = end + 1;
    } else if (ch === "`") {
      const end = closeBacktick(command, i + 1);
      substitutions.push({ kind: "`", body: command.slice(i + 1, end) });
      current += command.slice(i, end + 1);
      i = end + 1;
    } else if (ch === "|" && next === "|") {
      endPipeline();
      i += 2;
    } else if (ch === "|") {
      endStage();
      i += next === "&" ? 2 : 1;
    } else if (ch === "&" && next === "&") {
      endPipeline();
      i += 2;
    } else if (ch === "&" && next !== ">" && command[i - 1] !== ">" && command[i - 1] !== "<") {
      // `&` ends a pipeline, but `&>`, `>&2` and `<&0` are redirections.
      endPipeline();
      i += 1;
    } else if (ch === ";" || ch === "\n" || ch === "\r") {
      endPipeline();
      i += 1;
    } else {
      current += ch;
      i += 1;
    }
  }
  endPipeline();
  return { pipelines, substitutions };
}

/** Index just past the closing `"`; `$(…)` and backticks inside a double quote still run. */
function closeDoubleQuote(s: string, from: number, substitutions: Substitution[]): number {
  let i = from;
  while (i < s.length) {
    const ch = s[i];
    if (ch === "\\") i += 2;
    else if (ch === '"') return i + 1;
    else if (ch === "$" && s[i + 1] === "(") {
      const end = closeParen(s, i + 2);
      if (s[i + 2] !== "(") substitutions.push({ kind: "$(", body: s.slice(i + 2, end) });
      i = end + 1;
    } else if (ch === "`") {
      const end = closeBacktick(s, i + 1);
      substitutions.push({ kind: "`", body: s.slice(i + 1, end) });
      i = end + 1;
    } else i += 1;
  }
  return s.length;
}

/** Index of the `)` that closes a `(` opened just before `from` (or the end of the text). */
function closeParen(s: string, from: number): number {
  let depth = 1;
  let i = from;
  while (i < s.length) {
    const ch = s[i];
    if (ch === "\\") i += 2;
    else if (ch === "'") {
      const end = s.indexOf("'", i + 1);
      i = end < 0 ? s.length : end + 1;
    } else if (ch === '"') i = closeDoubleQuote(s, i + 1, []);
    else if (ch === "`") i = closeBacktick(s, i + 1) + 1;
    else if (ch === "(") {
      depth += 1;
      i += 1;
    } else if (ch === ")") {
      depth -= 1;
      if (depth === 0) return i;
      i += 1;
    } else i += 1;
  }
  return s.length;
}

function closeBacktick(s: string, from: number): number {
  let i = from;
  while (i < s.length) {
    if (s[i] === "\\") i += 2;
    else if (s[i] === "`") return i;
    else i += 1;
  }
  return s.length;
}
