/**
 * Code blocks in assistant text (issue 30 item 5): highlighted by highlight.js for the languages a
 * workspace usually holds (a fence without a known language stays plain), and a Copy button on
 * each. Runs on rendered, sanitized blocks only: highlight.js escapes the code it wraps in spans,
 * so what goes back into the block is its own text, marked up.
 */
import hljs from "highlight.js/lib/core";
import bash from "highlight.js/lib/languages/bash";
import c from "highlight.js/lib/languages/c";
import cpp from "highlight.js/lib/languages/cpp";
import csharp from "highlight.js/lib/languages/csharp";
import css from "highlight.js/lib/languages/css";
import diff from "highlight.js/lib/languages/diff";
import dockerfile from "highlight.js/lib/languages/dockerfile";
import go from "highlight.js/lib/languages/go";
import ini from "highlight.js/lib/languages/ini";
import java from "highlight.js/lib/languages/java";
import javascript from "highlight.js/lib/languages/javascript";
import json from "highlight.js/lib/languages/json";
import markdown from "highlight.js/lib/languages/markdown";
import python from "highlight.js/lib/languages/python";
import rust from "highlight.js/lib/languages/rust";
import shell from "highlight.js/lib/languages/shell";
import sql from "highlight.js/lib/languages/sql";
import typescript from "highlight.js/lib/languages/typescript";
import xml from "highlight.js/lib/languages/xml";
import yaml from "highlight.js/lib/languages/yaml";
import { h, icon } from "./dom.js";

const LANGUAGES = { bash, c, cpp, csharp, css, diff, dockerfile, go, ini, java, javascript, json, markdown, python, rust, shell, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, lang);

/** Past this a block is shown plain: highlighting a huge paste would hold the frame. */
const MAX_HIGHLIGHT_CHARS = 50_000;

/** The `language-…` class marked gives a fenced block (the only class the sanitizer keeps). */
export const LANGUAGE_CLASS = /^language-[\w#+.-]{1,40}$/;

const decorated = new WeakSet<HTMLElement>();

/** Highlights and adds Copy to every `pre > code` in `root` not done yet. */
export function decorateCodeBlocks(root: HTMLElement): void {
  for (const code of Array.from(root.querySelectorAll<HTMLElement>("pre > code"))) {
    if (decorated.has(code)) continue;
    decorated.add(code);
    const pre = code.parentElement!;
    // marked ends a block's text with its newline; the copy is the code as fenced.
    const text = (code.textContent ?? "").replace(/\n$/, "");
    const lang = Array.from(code.classList).find((k) => LANGUAGE_CLASS.test(k))?.slice("language-".length).toLowerCase();
    if (lang && hljs.getLanguage(lang) && text.length <= MAX_HIGHLIGHT_CHARS) {
      code.innerHTML = hljs.highlight(text, { language: lang, ignoreIllegals: true }).value;
      code.classList.add("hljs");
      pre.dataset.language = lang;
    }
    const label = h("span", { text: "Copy" });
    const copy = h("button", {
      class: "code-copy",
      testid: "code-copy",
      attrs: { type: "button", "aria-label": lang ? `Copy ${lang} code` : "Copy code", title: "Copy" },
      on: {
        click: () => {
          void copyText(text).then(
            () => {
              label.textContent = "Copied";
              copy.dataset.copied = "";
              setTimeout(() => {
                label.textContent = "Copy";
                delete copy.dataset.copied;
              }, 1500);
            },
            () => (label.textContent = "Copy failed"),
          );
        },
      },
    }, icon("copy"), label);
    const wrap = h("div", { class: "code-block", testid: "code-block" });
    pre.replaceWith(wrap);
    wrap.append(copy, pre);
  }
}

async function copyText(text: string): Promise<void> {
  if (navigator.clipboard?.writeText) {
    await navigator.clipboard.writeText(text);
    return;
  }
  // Older webview hosts: the selection way.
  const area = document.createElement("textarea");
  area.value = text;
  document.body.append(area);
  area.select();
  const ok = document.execCommand("copy");
  area.remove();
  if (!ok) throw new Error("copy refused");
}
