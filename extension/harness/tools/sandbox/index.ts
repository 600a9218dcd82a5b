/**
 * The seven DeerFlow sandbox tools for one thread. bash is always registered: on the local
 * provider without the user's consent it answers with the "Host bash execution is disabled" text
 * (DeerFlow leaves it out instead; registering it lets the model learn how to get it enabled).
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import { createBashTool } from "./bash.js";
import { createGlobTool } from "./glob.js";
import { createGrepTool } from "./grep.js";
import { createLsTool } from "./ls.js";
import { createReadFileTool } from "./readFile.js";
import { createStrReplaceTool } from "./strReplace.js";
import { createWriteFileTool } from "./writeFile.js";
import type { SandboxToolDeps } from "./runtime.js";

export type { SandboxToolDeps } from "./runtime.js";
export { HOST_BASH_DISABLED_MESSAGE } from "./bash.js";
export { truncateBashOutput, truncateLsOutput, truncateReadFileOutput } from "./output.js";

export const SANDBOX_TOOL_NAMES = ["bash", "ls", "read_file", "write_file", "str_replace", "glob", "grep"] as const;

export function createSandboxTools(deps: SandboxToolDeps): StructuredToolInterface[] {
  return [
    createBashTool(deps),
    createLsTool(deps),
    createReadFileTool(deps),
    createWriteFileTool(deps),
    createStrReplaceTool(deps),
    createGlobTool(deps),
    createGrepTool(deps),
  ] as StructuredToolInterface[];
}
