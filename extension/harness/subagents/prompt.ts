/**
 * The lead's `<subagent_system>` prompt section (DeerFlow `lead_agent/prompt.py`, reference §10):
 * present only when the run has the `task` tool, with the per-response limit the
 * SubagentLimitMiddleware enforces and the run's types (the config's custom ones included).
 */
export function subagentPromptSection(maxConcurrent: number, bashAvailable: boolean, custom: ReadonlyArray<{ name: string }> = []): string {
  const types = ["`general-purpose`", ...(bashAvailable ? ["`bash` (shell workflows)"] : []), ...custom.map((t) => `\`${t.name}\``)];
  return `<subagent_system>
You can delegate with the \`task\` tool. Each subagent works in its own context, shares your sandbox and files, and returns one report.
- Delegate only independent, bounded pieces of work whose parallelism or context isolation clearly pays for the overhead; do simple or dependent steps yourself.
- Launch at most ${maxConcurrent} \`task\` calls in one response; extra calls are dropped. The number of subagents per run is limited too.
- Give each subagent a specific, self-contained prompt: it cannot see this conversation and cannot ask the user.
- Types: ${types.join(", ")}; the \`task\` tool describes each.
- Synthesize the reports yourself; verify what matters before relying on it.
</subagent_system>`;
}
