/**
 * Assistant text → sanitized HTML. marked parses, DOMPurify sanitizes with a narrow profile: no
 * scripts, no inline styles or event handlers (the CSP would block them anyway, but a blocked
 * inline handler still litters the console), no images (remote ones are blocked by the CSP), no
 * forms. Links keep only http(s)/mailto targets: VS Code opens those outside the webview; any
 * other target would navigate the panel itself, so it loses its href.
 */
import { Marked } from "marked";
import DOMPurify from "dompurify";
import { stableLength } from "../model/markdownSplit.js";

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

interface Rendered {
  /** Source of the stable blocks rendered so far (a prefix of the text). */
  stable: string;
  tail: HTMLElement;
  tailText: string;
}

const state = new WeakMap<HTMLElement, Rendered>();

/**
 * Renders `text` into `el` incrementally: text that grew past its previous stable prefix only
 * renders the newly stable blocks and the tail; any other change re-renders everything.
 */
export function setMarkdown(el: HTMLElement, text: string): void {
  const cut = stableLength(text);
  let r = state.get(el);
  if (!r || !text.startsWith(r.stable) || cut < r.stable.length) {
    el.replaceChildren();
    r = { stable: "", tail: document.createElement("div"), tailText: "" };
    r.tail.className = "md-block";
    el.append(r.tail);
    state.set(el, r);
  }
  if (cut > r.stable.length) {
    const block = document.createElement("div");
    block.className = "md-block";
    block.innerHTML = renderMarkdown(text.slice(r.stable.length, cut));
    el.insertBefore(block, r.tail);
    r.stable = text.slice(0, cut);
  }
  const tailText = text.slice(cut);
  if (tailText !== r.tailText) {
    r.tailText = tailText;
    r.tail.innerHTML = tailText ? renderMarkdown(tailText) : "";
  }
}
