/**
 * `ask_clarification` (DeerFlow `clarification_tool.py`). The body never runs in a normal chain:
 * the Clarification middleware intercepts the call and answers with the formatted question.
 * `returnDirect` is what ends the run: a tool's `Command({ goto: END })` cannot route the agent
 * graph (agent/graph/build.ts), but the graph ends the turn after a successful ToolMessage whose
 * `name` is a returnDirect tool, as createAgent's tools router does.
 *
 * Not ported: DeerFlow's `fields` (v2 structured form); the card is question + options.
 */
import { tool } from "langchain";
import { z } from "zod";

export const ASK_CLARIFICATION_TOOL_NAME = "ask_clarification";

export const CLARIFICATION_TYPES = ["missing_info", "ambiguous_requirement", "approach_choice", "risk_confirmation", "suggestion"] as const;

const schema = z.object({
  question: z.string().describe("The clarification question to ask the user. Be specific and clear."),
  clarification_type: z
    .enum(CLARIFICATION_TYPES)
    .describe("The type of clarification needed (missing_info, ambiguous_requirement, approach_choice, risk_confirmation, suggestion)."),
  context: z
    .string()
    .nullable()
    .optional()
    .describe("Optional context explaining why clarification is needed. Helps the user understand the situation."),
  options: z
    .array(z.string())
    .nullable()
    .optional()
    .describe("Optional list of choices (for approach_choice or suggestion types). Present clear options for the user to choose from."),
});

const DESCRIPTION = `Ask the user for clarification when you need more information to proceed.

Use this tool when you encounter situations where you cannot proceed without user input:
- **Missing information**: Required details not provided (e.g., file paths, URLs, specific requirements)
- **Ambiguous requirements**: Multiple valid interpretations exist
- **Approach choices**: Several valid approaches exist and you need user preference
- **Risky operations**: Destructive actions that need explicit confirmation (e.g., deleting files, modifying production)
- **Suggestions**: You have a recommendation but want user approval before proceeding

The execution will be interrupted and the question will be presented to the user.
Wait for the user's response before continuing.

Choosing the interaction shape:
- One open question -> just \`question\` (free text input)
- Pick exactly one option -> \`options\`

Best practices:
- Ask ONE clarification at a time for clarity
- Be specific and clear in your question
- Don't make assumptions when clarification is needed
- For risky operations, ALWAYS ask for confirmation
- After calling this tool, execution will be interrupted automatically`;

export function askClarificationTool() {
  return tool(() => "Clarification request processed by middleware", {
    name: ASK_CLARIFICATION_TOOL_NAME,
    description: DESCRIPTION,
    schema,
    returnDirect: true,
  });
}
