/**
 * Where streamed markdown can be cut so the part before the cut never renders differently again:
 * after the last blank line that is outside a code fence. The panel renders the text before the
 * cut once, block by block, and re-renders only the tail on each frame, so a long answer costs a
 * paragraph per frame, not the whole answer. (A list or reference link spanning a blank line may
 * render as two blocks while streaming; the complete message is the same text, so it stays so.)
 */
export function stableLength(text: string): number {
  let stable = 0;
  let inFence = false;
  let fence = "";
  let pos = 0;
  while (pos < text.length) {
    const nl = text.indexOf("\n", pos);
    if (nl === -1) break; // the last line is still being written
    const line = text.slice(pos, nl);
    const m = /^ {0,3}(`{3,}|~{3,})/.exec(line);
    if (m) {
      const marker = m[1]!;
      if (!inFence) {
        inFence = true;
        fence = marker;
      } else if (marker[0] === fence[0] && marker.length >= fence.length && line.trim() === marker) {
        inFence = false;
      }
    } else if (!inFence && line.trim() === "") {
      stable = nl + 1;
    }
    pos = nl + 1;
  }
  return stable;
}
