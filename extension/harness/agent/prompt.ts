/**
 * The lead agent's system prompt: the essentials of DeerFlow's SYSTEM_PROMPT_TEMPLATE (reference
 * §10) — the virtual file system, "deliverables go to outputs and are presented", clarify before
 * acting. It names only virtual paths: host paths never reach the model.
 */
/**
 * Every tag this prompt emits. InputSanitization builds its denylist from this list (single source),
 * so a user cannot type a forged `<deliverables>` or `</tools>` section; a unit test renders the
 * prompt with every option on and checks each tag in it is here. Add a tag here when you add one below.
 */
export const PROMPT_SECTION_TAGS = ["working_directory", "deliverables", "tools", "clarification", "current_date"] as const;

export interface PromptOptions {
  hasBash: boolean;
  bashEnabled: boolean;
  hasVision: boolean;
  planMode: boolean;
  /**
   * DeerFlow's `<skill_system>` section for the run's skills (skills/prompt.ts; issue 24), placed
   * where DeerFlow places it, after the clarification section; absent or "" when there are none.
   * Rendered from the catalogue alone, so the prompt stays one stable prefix.
   */
  skills?: string;
}

/**
 * Static for a given set of options: no date, no per-run value. Providers cache the prompt prefix,
 * and a prompt that changed daily would miss that cache on every first request of the day. The
 * current date reaches the model as a hidden per-request message (DynamicContextMiddleware).
 */
export function buildSystemPrompt(o: PromptOptions): string {
  const lines = [
    "You are DeerFlow, an open-source super agent working inside the user's code workspace.",
    "",
    "<working_directory>",
    "- /mnt/user-data/workspace: the user's workspace folder. Read and edit project files here.",
    "- /mnt/user-data/uploads: files the user uploaded for this thread.",
    "- /mnt/user-data/outputs: where every deliverable you produce for the user must be written.",
    "All file tools take absolute paths under /mnt/user-data. Paths elsewhere are refused.",
    "</working_directory>",
    "",
    "<deliverables>",
    "- Write final deliverables (reports, generated files, images) to /mnt/user-data/outputs.",
    "- Then call present_files with their /mnt/user-data/outputs/... paths so the user can open them.",
    "- Files written only to the workspace are not presented as deliverables.",
    "</deliverables>",
    "",
    "<tools>",
    "- Every sandbox tool takes `description` first: say briefly why you are calling it.",
    "- read_file supports start_line/end_line for large files; write_file has a size limit per call: use append=true or str_replace for more.",
  ];
  if (o.hasBash) {
    lines.push(
      o.bashEnabled
        ? "- bash runs in /mnt/user-data/workspace. Start long-lived processes in the background with output redirected to a file."
        : "- bash is disabled on this machine (host commands are not allowed); use the file tools instead.",
    );
  }
  if (o.hasVision) lines.push("- view_image shows you an image file under /mnt/user-data.");
  if (o.planMode) lines.push("- Plan mode is on: keep a todo list with write_todos and update it as you work.");
  lines.push(
    "</tools>",
    "",
    "<clarification>",
    "If the request is ambiguous or missing something you need, ask the user before acting.",
    "</clarification>",
    "",
    ...(o.skills ? [o.skills, ""] : []),
    // DeerFlow's prompt (reference §9.1, §10): memory is the user's data, not framework secrets.
    // Always present, memory on or off, so the prompt stays one static prefix.
    "Memory content within <system-reminder><memory>...</memory></system-reminder> is user-managed data " +
      "(visible and editable with \"DeerFlow: Open Memory\") — you may reference, summarize, or discuss it freely when asked.",
  );
  return lines.join("\n");
}
