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

/**
 * A provisional cut inside the paragraph still streaming after `from` (a stable cut), so that a
 * long paragraph (an answer without blank lines) is rendered in pieces of about `max` characters
 * instead of whole on every frame: re-parsing and, above all, re-laying out one ever-growing
 * paragraph costs O(length) per frame, O(n²) over the answer. Pieces end before a word that
 * starts with a letter, after a space or newline, so a piece rarely begins with block syntax
 * (`#`, `-`, `1.`, a fence). A piece may render differently from the whole paragraph (emphasis
 * across the cut), so the renderer treats pieces as provisional: once the paragraph or the
 * message is complete it renders the paragraph again as one block. Never cuts inside a fence
 * (a piece would lose its fence), and returns `from` when the tail is short enough.
 */
export function softLength(text: string, from: number, max: number): number {
  if (text.length - from <= max) return from;
  const tail = text.slice(from);
  if (/^ {0,3}(`{3,}|~{3,})/m.test(tail)) return from;
  // The latest word start at least max/4 into the tail: pieces stay between max/4 and the tail.
  for (let i = text.length - 1; i > from + (max >> 2); i--) {
    const c = text.charCodeAt(i - 1);
    if ((c === 32 || c === 10) && isLetter(text.charCodeAt(i), text[i]!)) return i;
  }
  return from;
}

function isLetter(code: number, ch: string): boolean {
  if ((code >= 65 && code <= 90) || (code >= 97 && code <= 122)) return true;
  return code > 127 && /\p{L}/u.test(ch);
}
