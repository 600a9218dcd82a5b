/**
 * A fetched page as the model reads it (issue 35): DeerFlow's `ReadabilityExtractor` +
 * `Article.to_markdown` (readabilipy + markdownify), here Mozilla's Readability on a linkedom
 * document and turndown. `# <title>` then the article as Markdown; scripts, styles and other
 * non-content elements are removed before Readability sees the page, so no script or CSS text
 * can reach the model even when Readability falls back to the whole body.
 *
 * A text body (text/plain, Markdown, JSON, XML) is returned as it is; anything else (images,
 * PDFs, archives) is refused with what it was. Neither the page's tags nor its text are trusted:
 * the tool's result goes through the harness tag neutralizer (tools/webFetch.ts).
 */
import { parseHTML } from "linkedom";
import { Readability } from "@mozilla/readability";
import TurndownService from "turndown";
import { neutralizeUntrustedTags } from "../middlewares/shared/harnessTags.js";

/** Elements that never carry readable content; removed before extraction. */
const DROPPED = ["script", "style", "noscript", "template", "iframe", "object", "embed", "svg", "canvas", "link", "meta"];

export type BodyKind = "html" | "text" | "other";

export function bodyKind(contentType: string, body: Buffer): BodyKind {
  const type = contentType.split(";")[0]!.trim().toLowerCase();
  if (type === "text/html" || type === "application/xhtml+xml") return "html";
  if (type.startsWith("text/") || /^application\/(?:json|xml|[\w.+-]+\+(?:json|xml)|javascript|x-ndjson|yaml|x-yaml|toml)$/.test(type)) return "text";
  // No type: sniff like a browser would for the two kinds we read.
  if (type === "") {
    const head = body.subarray(0, 512).toString("utf8").trimStart().toLowerCase();
    if (head.startsWith("<!doctype html") || head.startsWith("<html")) return "html";
    return body.subarray(0, 512).includes(0) ? "other" : "text";
  }
  return "other";
}

/** The body as text in the charset its Content-Type names (UTF-8 when none or unknown). */
export function decodeBody(contentType: string, body: Buffer): string {
  const charset = /charset\s*=\s*"?([\w.:-]+)/i.exec(contentType)?.[1];
  try {
    return new TextDecoder(charset ?? "utf-8").decode(body);
  } catch {
    return new TextDecoder("utf-8").decode(body);
  }
}

function turndown(): TurndownService {
  const t = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced", bulletListMarker: "-" });
  t.remove(DROPPED as TurndownService.Filter);
  return t;
}

/**
 * The content with every text node's harness tags neutralized before Markdown conversion: turndown
 * escapes `_` (`</tool\_result>`), which the neutralizer's pattern would no longer recognise.
 */
function neutralizedText(html: string): string {
  const { document } = parseHTML(`<!doctype html><html><body>${html}</body></html>`);
  // linkedom parses `&lt;` as a text node of its own: merge neighbours so a tag is one string.
  document.body.normalize();
  const walker = document.createTreeWalker(document.body, 4 /* NodeFilter.SHOW_TEXT */);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.nodeValue ?? "";
    const safe = neutralizeUntrustedTags(text);
    if (safe !== text) node.nodeValue = safe;
  }
  return document.body.innerHTML;
}

/** `# title` and the page's main content as Markdown (DeerFlow's `Article.to_markdown`). */
export function htmlToMarkdown(html: string, url: string): string {
  const { document } = parseHTML(html);
  for (const el of Array.from(document.querySelectorAll(DROPPED.join(",")))) el.remove();
  let title = document.title?.trim() ?? "";
  let content: string | undefined;
  try {
    // Readability reads the document's URL to resolve relative links; linkedom has none of its own.
    Object.defineProperty(document, "documentURI", { value: url, configurable: true });
    const article = new Readability(document, { charThreshold: 100 }).parse();
    if (article?.content?.trim()) content = article.content;
    if (article?.title?.trim()) title = article.title.trim();
  } catch {
    // A page Readability cannot read falls back to its body: still readable, still script-free.
  }
  if (content === undefined) {
    const fallback = parseHTML(html).document;
    for (const el of Array.from(fallback.querySelectorAll(DROPPED.join(",")))) el.remove();
    content = fallback.body?.innerHTML ?? "";
  }
  const markdown = content.trim() ? turndown().turndown(neutralizedText(content)).trim() : "";
  return `# ${title || url}\n\n${markdown || "*No content available*"}\n`;
}
