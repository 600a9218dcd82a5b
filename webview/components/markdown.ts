/**
 * Assistant text → sanitized HTML. marked parses, DOMPurify sanitizes with a narrow profile: no
 * scripts, no inline styles or event handlers (the CSP would block them anyway, but a blocked
 * inline handler still litters the console), no images (remote ones are blocked by the CSP), no
 * forms. Links keep only http(s)/mailto targets: VS Code opens those outside the webview; any
 * other target would navigate the panel itself, so it loses its href.
 */
import { Marked } from "marked";
import DOMPurify from "dompurify";
import { softLength, stableLength } from "../model/markdownSplit.js";
import { LANGUAGE_CLASS, decorateCodeBlocks } from "./codeBlocks.js";

const marked = new Marked({
  gfm: true,
  breaks: false,
  async: false,
  renderer: {
    // Raw HTML in model output is shown as text, never parsed: nothing to sanitize away, and no
    // CSP reports from DOMPurify's parser meeting an `onerror=` or `style=` in the source.
    html: ({ text }) => escapeHtml(text),
  },
});

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

let hooked = false;
function hook(): void {
  if (hooked) return;
  hooked = true;
  // A fenced block's language (marked: <code class="language-ts">) is the one class kept: the
  // code blocks read it to highlight (codeBlocks.ts).
  DOMPurify.addHook("uponSanitizeAttribute", (node, data) => {
    if (node.nodeName === "CODE" && data.attrName === "class" && LANGUAGE_CLASS.test(data.attrValue)) data.forceKeepAttr = true;
  });
  DOMPurify.addHook("afterSanitizeAttributes", (node) => {
    if (node.tagName !== "A") return;
    const href = node.getAttribute("href") ?? "";
    if (!/^(https?:|mailto:)/i.test(href)) node.removeAttribute("href");
    else node.setAttribute("title", href);
  });
}

export function renderMarkdown(text: string): string {
  hook();
  const html = marked.parse(text, { async: false });
  return DOMPurify.sanitize(html, {
    FORBID_TAGS: ["style", "script", "img", "iframe", "form", "input", "button", "textarea", "select", "svg", "math"],
    FORBID_ATTR: ["style", "class", "id"],
    ALLOW_DATA_ATTR: false,
  });
}

/** Provisional pieces of a streaming paragraph are about this long (see softLength). */
const SOFT_PIECE_CHARS = 2_000;

interface Block {
  el: HTMLElement;
  /** Where its source starts and ends in the text. */
  start: number;
  end: number;
  /** A provisional piece of a paragraph still streaming (see softLength). */
  soft: boolean;
}

interface Rendered {
  /** Source of the blocks rendered so far (a prefix of the text). */
  stable: string;
  blocks: Block[];
  tail: HTMLElement;
  tailText: string;
}

const state = new WeakMap<HTMLElement, Rendered>();

/**
 * Renders `text` into `el` incrementally: text that grew past its previous stable prefix only
 * renders the newly stable blocks and the tail; any other change re-renders everything. While
 * `streaming`, a long paragraph is cut into provisional pieces, so a frame parses and lays out a
 * piece, not the whole paragraph; once that paragraph (or the message) is complete, its pieces
 * are rendered again as one block, so the finished message renders exactly as marked renders it.
 */
export function setMarkdown(el: HTMLElement, text: string, streaming = false): void {
  const hard = stableLength(text);
  let r = state.get(el);
  if (r && text.startsWith(r.stable)) {
    const firstSoft = r.blocks.findIndex((b) => b.soft);
    const soft = firstSoft < 0 ? undefined : r.blocks[firstSoft]!;
    if (soft && (!streaming || hard > soft.start)) rewind(r, firstSoft, text);
  }
  if (!r || !text.startsWith(r.stable) || hard < hardEnd(r)) {
    el.replaceChildren();
    r = { stable: "", blocks: [], tail: document.createElement("div"), tailText: "" };
    r.tail.className = "md-block";
    el.append(r.tail);
    state.set(el, r);
  }
  if (hard > r.stable.length) addBlock(el, r, text, hard, false);
  if (streaming) {
    const soft = softLength(text, r.stable.length, SOFT_PIECE_CHARS);
    if (soft > r.stable.length) addBlock(el, r, text, soft, true);
  }
  const tailText = text.slice(r.stable.length);
  if (tailText !== r.tailText) {
    r.tailText = tailText;
    r.tail.innerHTML = tailText ? renderMarkdown(tailText) : "";
  }
  // The tail is final once the message is: its code blocks get their highlighting and Copy too.
  if (!streaming) decorateCodeBlocks(r.tail);
}

function addBlock(el: HTMLElement, r: Rendered, text: string, end: number, soft: boolean): void {
  const start = r.stable.length;
  const block = document.createElement("div");
  block.className = soft ? "md-block md-soft" : "md-block";
  block.innerHTML = renderMarkdown(text.slice(start, end));
  if (!soft) decorateCodeBlocks(block);
  el.insertBefore(block, r.tail);
  r.blocks.push({ el: block, start, end, soft });
  r.stable = text.slice(0, end);
}

/** Drops blocks[from..] (the provisional pieces and what follows): their text renders again. */
function rewind(r: Rendered, from: number, text: string): void {
  for (const b of r.blocks.splice(from)) b.el.remove();
  r.stable = text.slice(0, r.blocks.at(-1)?.end ?? 0);
}

/** The end of the last block that is not provisional: the text up to there never renders again. */
function hardEnd(r: Rendered): number {
  for (let i = r.blocks.length - 1; i >= 0; i--) if (!r.blocks[i]!.soft) return r.blocks[i]!.end;
  return 0;
}
