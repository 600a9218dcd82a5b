/**
 * `web_fetch(url)` (issue 35; DeerFlow `community/jina_ai/tools.py` web_fetch_tool and its
 * siblings behind the same name): the page at a URL as readable Markdown.
 *
 * Offered only when the configuration has DeerFlow's `tools:` entry `name: web_fetch`
 * (config/webTools.ts), whatever its `use:` names: every provider DeerFlow has (Jina, Browserless,
 * Exa, …) is served here by one direct fetch, because a third-party reader would see every URL
 * and page the agent reads. Its calls are the approval class `web` (approvals/classify.ts).
 *
 * Where it differs from DeerFlow on purpose:
 * - the network guard (./webRequest.ts): DeerFlow's Jina tool sends the URL to Jina without an
 *   address check, and its self-hosted providers check names but let the client resolve again;
 * - the size: DeerFlow returns the first 4096 characters of the Markdown. Here up to
 *   WEB_FETCH_MAX_OUTPUT_BYTES come back, a limit below 64 KB, so that neither the thread nor the
 *   copy ToolOutputBudget saves under outputs/.tool-results ever holds more; the budget then
 *   decides, as for every tool, how much of it sits in the model's context.
 */
import { tool } from "langchain";
import type { ToolRuntime } from "langchain";
import { z } from "zod";
import { neutralizeUntrustedTags } from "../middlewares/shared/harnessTags.js";
import { bodyKind, decodeBody, htmlToMarkdown } from "./webExtract.js";
import { guardedGet, WebFetchError } from "./webRequest.js";

export const WEB_FETCH_TOOL_NAME = "web_fetch";
/** Below 64 KB in UTF-8, the marker included. */
export const WEB_FETCH_MAX_OUTPUT_BYTES = 60_000;

export interface WebFetchSettings {
  timeoutMs: number;
  /** Bytes of the response body read at most; the rest of a larger page is not downloaded. */
  maxBytes: number;
  allowPrivateAddresses: boolean;
}

const schema = z.object({
  url: z.string().describe("The URL to fetch the contents of."),
});

// DeerFlow's docstring, word for word: models trained on DeerFlow know how to call it.
const DESCRIPTION = `Fetch the contents of a web page at a given URL.
Only fetch EXACT URLs that have been provided directly by the user or have been returned in results from the web_search and web_fetch tools.
This tool can NOT access content that requires authentication, such as private Google Docs or pages behind login walls.
Do NOT add www. to URLs that do NOT have them.
URLs must include the schema: https://example.com is a valid URL while example.com is an invalid URL.`;

/** `text` cut to `maxBytes` of UTF-8 (the marker included), never inside a character. */
export function capUtf8(text: string, maxBytes: number, note: (kept: number) => string): string {
  if (Buffer.byteLength(text, "utf8") <= maxBytes) return text;
  // The marker for the whole length is the longest it can be: the final one (fewer digits) fits too.
  const marker = note(text.length);
  const room = Math.max(0, maxBytes - Buffer.byteLength(marker, "utf8"));
  let kept = new TextDecoder().decode(Buffer.from(text, "utf8").subarray(0, room));
  // A character cut in half decodes as U+FFFD: drop it rather than show a broken glyph.
  kept = kept.replace(/\uFFFD$/, "");
  return kept + note(kept.length);
}

/** The fetched page as the tool returns it: Markdown (or the text itself), neutralized and capped. */
export async function fetchAsMarkdown(url: string, s: WebFetchSettings, signal?: AbortSignal): Promise<string> {
  const page = await guardedGet(url, { timeoutMs: s.timeoutMs, maxBytes: s.maxBytes, allowPrivateAddresses: s.allowPrivateAddresses, ...(signal ? { signal } : {}) });
  const kind = bodyKind(page.contentType, page.body);
  if (kind === "other") {
    const type = page.contentType.split(";")[0]!.trim() || "binary data";
    return `Error: ${page.url} is ${type}, not a web page or text; web_fetch reads HTML and text only.`;
  }
  const text = decodeBody(page.contentType, page.body);
  let out = kind === "html" ? htmlToMarkdown(text, page.url) : text;
  if (page.truncated) out += `\n\n[web_fetch read the first ${s.maxBytes} bytes of this page; the rest was not downloaded.]`;
  out = neutralizeUntrustedTags(out);
  return capUtf8(out, WEB_FETCH_MAX_OUTPUT_BYTES, (kept) => `\n\n[... truncated: web_fetch returns at most ${WEB_FETCH_MAX_OUTPUT_BYTES} bytes; ${kept} characters shown.]`);
}

export function webFetchTool(settings: WebFetchSettings) {
  return tool(
    async (input, runtime: ToolRuntime) => {
      try {
        return await fetchAsMarkdown(input.url, settings, runtime?.signal);
      } catch (err) {
        if (err instanceof WebFetchError) return err.message;
        throw err;
      }
    },
    { name: WEB_FETCH_TOOL_NAME, description: DESCRIPTION, schema },
  );
}
