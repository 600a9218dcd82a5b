/**
 * "Open Diff" on a pending write_file/str_replace (issue 13): the file as it is now and as the
 * call would leave it, computed with the tools' own edit (files.ts `replacedText`), read through
 * the trust boundary's read rules (a link planted in the workspace cannot make it read elsewhere).
 */
import type { PendingApproval } from "../../protocol/approvals.js";
import { HarnessError } from "../errors.js";
import { replacedText } from "../sandbox/files.js";
import { readFileCheckedSync } from "../trust/openChecked.js";
import { resolveReadPath } from "../trust/toolPaths.js";
import type { ThreadDirs } from "../threads/threadDirs.js";

/** A diff is for reading; a larger file is refused rather than loaded into the panel. */
const MAX_DIFF_BYTES = 5 * 1024 * 1024;

export interface ProposedEdit {
  path: string;
  host_path: string;
  exists: boolean;
  current: string | null;
  proposed: string;
}

export function proposedEdit(call: PendingApproval, dirs: ThreadDirs): ProposedEdit {
  if (call.name !== "write_file" && call.name !== "str_replace") {
    throw new HarnessError("usage", `${call.name} does not write a file: there is no diff to show.`);
  }
  const args = call.args;
  const path = typeof args.path === "string" ? args.path : "";
  const host = resolveReadPath(path, dirs);
  let current: string | null = null;
  try {
    const bytes = readFileCheckedSync(host, MAX_DIFF_BYTES + 1);
    if (bytes.length > MAX_DIFF_BYTES) throw new HarnessError("usage", `${path} is over ${MAX_DIFF_BYTES / 1024 / 1024} MB: too large to show as a diff.`);
    current = bytes.toString("utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  let proposed: string;
  if (call.name === "write_file") {
    const content = typeof args.content === "string" ? args.content : "";
    proposed = args.append === true ? (current ?? "") + content : content;
  } else {
    const edited =
      current === null
        ? undefined
        : replacedText(current, typeof args.old_str === "string" ? args.old_str : "", typeof args.new_str === "string" ? args.new_str : "", args.replace_all === true);
    // The call would fail (the text is not there): the diff shows no change, and the tool says why when it runs.
    proposed = edited ?? current ?? "";
  }
  return { path, host_path: host, exists: current !== null, current, proposed };
}
