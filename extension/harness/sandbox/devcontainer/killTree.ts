/**
 * Killing one exec's whole process tree INSIDE the container. The Engine API has no "kill exec",
 * and closing our stream leaves the command running, so a second, root exec finds the tree and
 * kills it.
 *
 * What marks a process as the exec's, each closing a way out the others leave open:
 * - the SESSION: runc makes every exec its own session leader, so the exec's root pid is also
 *   its session id, and `env -i`, `sudo` (without a pty) and orphaned children keep it. Our
 *   wrapper reports the root pid first thing (EXEC_WRAPPER), so it is known even after the root
 *   has exec'd away its environment or died;
 * - the ENVIRONMENT token (DEERFLOW_EXEC_ID): inherited across `setsid`, even by an orphan;
 * - ANCESTRY: any descendant of a marked process, which catches `setsid env -i …` and `sudo`
 *   with a pty while their parent lives;
 * - the exec's OUTPUT PIPES: whoever still holds them is what keeps the exec's stream open.
 * The sweep takes the closure of these (a member's session and pipes mark more members), stops
 * every member before killing any (a killed child could otherwise let its parent shell run the
 * next line, or a parent fork between scan and kill), and repeats until nothing is left.
 *
 * Left out on purpose: a process that calls `setsid`, scrubs its environment AND detaches from
 * a parent that then exits, AND redirects its output. That is a deliberate daemon; it is
 * confined by the container, which the idle stop and Rebuild end.
 */
import type { EngineApi } from "./engineApi.js";

export const EXEC_ID_ENV = "DEERFLOW_EXEC_ID";

/**
 * `sh -c EXEC_WRAPPER deerflow-exec CMD…`: prints its pid (the exec's root, session leader) and
 * its stdout/stderr pipes on stderr as the first line, then becomes the command (same pid).
 * containerExec.ts takes the line off the output. readlink is in coreutils and busybox.
 */
export const EXEC_WRAPPER = `printf '%s %s %s\\n' "$$" "$(readlink /proc/$$/fd/1 2>/dev/null)" "$(readlink /proc/$$/fd/2 2>/dev/null)" >&2; exec "$@"`;

/** What the wrapper reported: the root pid and the exec's output pipes (`pipe:[N]`). */
export interface ExecRoot {
  readonly pid: number;
  readonly pipes: readonly string[];
}

export function parseExecRoot(line: string): ExecRoot | undefined {
  const [pid, ...pipes] = line.trim().split(/\s+/);
  if (pid === undefined || !/^\d+$/.test(pid)) return undefined;
  return { pid: Number(pid), pipes: pipes.filter((p) => /^pipe:\[\d+\]$/.test(p)) };
}

/**
 * POSIX sh + grep + ls, reading /proc: present in Debian, Alpine (busybox) and UBI images.
 * $1 = the token, $2 = the root pid (0 when unknown), $3 = the exec's pipes.
 */
const KILL_SCRIPT = `tok="$1"; root="$2"; me=$$
set -f
scan() {
  set +f; set -- /proc/[0-9]*; set -f
  for d in "$@"; do
    p=\${d#/proc/}
    [ "$p" = "$me" ] && continue
    read -r st 2>/dev/null < "$d/stat" || continue
    rest=\${st##*) }
    set -- $rest
    [ "$1" = Z ] && continue
    mark=0
    grep -qaF "${EXEC_ID_ENV}=$tok" "$d/environ" 2>/dev/null && mark=1
    pipes=""
    for w in $(ls -l "$d/fd/1" "$d/fd/2" 2>/dev/null); do
      case "$w" in pipe:*) pipes="$pipes $w" ;; esac
    done
    echo "$p $2 $4 $mark$pipes"
  done
}
members=" "; sids=" $root "; held=" $3 "
close() {
  table=$(scan)
  grew=1
  while [ $grew = 1 ]; do
    grew=0
    while read -r p pp s m pl; do
      [ -z "$p" ] && continue
      case "$members" in *" $p "*) continue ;; esac
      hit=$m
      case "$members" in *" $pp "*) hit=1 ;; esac
      [ "$s" != 0 ] && case "$sids" in *" $s "*) hit=1 ;; esac
      for x in $pl; do case "$held" in *" $x "*) hit=1 ;; esac; done
      [ "$p" = "$root" ] && hit=1
      if [ "$hit" = 1 ]; then
        members="$members$p "; sids="$sids$s "; grew=1
        for x in $pl; do held="$held$x "; done
      fi
    done <<EOF
$table
EOF
  done
}
n=0
while [ $n -lt 20 ]; do
  members=" "
  close
  [ -z "\${members# }" ] && exit 0
  kill -STOP $members 2>/dev/null
  close
  kill -STOP $members 2>/dev/null
  kill -KILL $members 2>/dev/null
  n=$((n+1))
done`;

/** Kill every process of one exec; best effort (the container may be gone already). */
export async function killExecTree(api: EngineApi, containerId: string, token: string, root: ExecRoot | undefined): Promise<void> {
  const args = [token, String(root?.pid ?? 0), (root?.pipes ?? []).join(" ")];
  const execId = await api.createExec(containerId, { cmd: ["sh", "-c", KILL_SCRIPT, "sh", ...args], user: "0" });
  const stream = await api.startExec(execId);
  stream.resume();
  await new Promise<void>((resolve) => {
    stream.once("close", resolve);
    stream.once("error", () => resolve());
  });
}
