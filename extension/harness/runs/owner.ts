/**
 * Who owns a running run, and whether that owner is provably gone.
 *
 * An owner id is `host:pid:start`, where `start` is the process start time from /proc (Linux) so a
 * recycled pid is not mistaken for the original owner. "Provably gone" means: same host, and the
 * pid is dead or belongs to another process. On another host (a shared folder) nothing is
 * provable, and the lease expiry decides.
 */
import { hostname } from "node:os";
import { readFileSync } from "node:fs";
import { randomUUID } from "node:crypto";

function processStart(pid: number): string | undefined {
  try {
    // Field 22 of /proc/<pid>/stat is the start time in clock ticks; the comm field (2) may hold
    // spaces and parentheses, so split after its closing parenthesis.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

export function currentOwnerId(): string {
  return `${hostname()}:${process.pid}:${processStart(process.pid) ?? randomUUID()}`;
}

export function isOwnerGone(owner: string): boolean {
  const parts = owner.split(":");
  const start = parts.pop();
  const pid = Number(parts.pop());
  const host = parts.join(":");
  if (host !== hostname() || !Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "ESRCH";
  }
  const actual = processStart(pid);
  return actual !== undefined && actual !== start;
}
