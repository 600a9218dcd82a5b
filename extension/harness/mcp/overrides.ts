/**
 * Servers the user turned off in the panel (issue 23), per workspace folder, kept beside the
 * folder's MCP consents in the data directory (`…/mcp/state.json`): never written into the
 * user's or the workspace's configuration files, which stay as the user wrote them. Written by
 * rename, like every file there.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomUUID } from "node:crypto";

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
    const temp = `${this.file}.${randomUUID()}.tmp`;
    writeFileSync(temp, `${JSON.stringify({ disabled: [...disabled].sort() }, null, 2)}\n`, { mode: 0o600 });
    renameSync(temp, this.file);
  }
}
