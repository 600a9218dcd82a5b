/**
 * Servers the user turned off in the panel (issue 23), per workspace folder, kept beside the
 * folder's MCP consents in the data directory (`…/mcp/state.json`): never written into the
 * user's or the workspace's configuration files, which stay as the user wrote them. Written
 * atomically (trust/atomicWrite.ts), like every file there.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { writeJsonAtomic } from "../trust/atomicWrite.js";

export class McpOverrides {
  private readonly file: string;

  constructor(readonly dir: string) {
    this.file = join(dir, "state.json");
  }

  disabled(): Set<string> {
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8")) as { disabled?: unknown };
      return new Set(Array.isArray(parsed.disabled) ? parsed.disabled.filter((n): n is string => typeof n === "string") : []);
    } catch {
      return new Set();
    }
  }

  setEnabled(server: string, enabled: boolean): void {
    const disabled = this.disabled();
    if (enabled) disabled.delete(server);
    else disabled.add(server);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    writeJsonAtomic(this.file, { disabled: [...disabled].sort() }, { mode: 0o600 });
  }
}
