import { test } from "node:test";
import assert from "node:assert/strict";
import { softLength, stableLength } from "../../../webview/model/markdownSplit.js";

test("the stable prefix ends after the last blank line outside a code fence", () => {
  assert.equal(stableLength(""), 0);
  assert.equal(stableLength("one paragraph still going"), 0);
  const a = "First paragraph.\n\nSecond";
  assert.equal(a.slice(0, stableLength(a)), "First paragraph.\n\n");
  const b = "Intro\n\n```ts\nconst a = 1;\n\nconst b = 2;\n";
  assert.equal(b.slice(0, stableLength(b)), "Intro\n\n", "a blank line inside an open fence is not a cut");
  const c = b + "```\n\nAfter";
  assert.equal(c.slice(0, stableLength(c)), b + "```\n\n");
  const d = "~~~\n```\n\n~~~\n\nx";
  assert.equal(d.slice(0, stableLength(d)), "~~~\n```\n\n~~~\n\n", "a fence closes only with its own marker");
});

test("the prefix only grows as text streams in (what the renderer relies on)", () => {
  const full = "# Title\n\nSome text.\n\n```py\nprint(1)\n\nprint(2)\n```\n\n- a\n- b\n\nEnd.";
  let last = 0;
  for (let i = 0; i <= full.length; i++) {
    const n = stableLength(full.slice(0, i));
    assert.ok(n >= last, `shrank at ${i}`);
    last = n;
  }
});

test("a long streaming paragraph gets a provisional cut before a word, never inside a fence", () => {
  const para = Array.from({ length: 1000 }, (_, i) => `tok${i}`).join(" ");
  assert.equal(softLength(para.slice(0, 500), 0, 2000), 0, "short enough: no cut");
  const cut = softLength(para, 0, 2000);
  assert.ok(cut > 500 && cut < para.length, `cut at ${cut}`);
  assert.equal(para[cut - 1], " ");
  assert.match(para.slice(cut), /^tok\d+/);
  const intro = "Intro\n\n";
  const after = softLength(intro + para, intro.length, 2000);
  assert.ok(after > intro.length, "cuts after the stable prefix");
  const fenced = "```\n" + para;
  assert.equal(softLength(fenced, 0, 2000), 0, "inside a fence");
  assert.equal(softLength("x".repeat(5000), 0, 2000), 0, "no word start: no cut");
});
