// The glob matcher the model's patterns go through (sandbox/globMatch.ts): DeerFlow's semantics,
// the same answers as the regex matcher it replaced on ordinary patterns, caps with an error the
// model can act on, and answers on the patterns that used to freeze the harness.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  GlobPatternError,
  MAX_GLOB_GLOBSTARS,
  MAX_GLOB_PATTERN_CHARS,
  MAX_GLOB_STARS,
  compileGlob,
} from "../../../extension/harness/sandbox/globMatch.js";
import { pathMatches, shouldIgnoreName } from "../../../extension/harness/sandbox/search.js";
import { legacyPathMatches } from "../../fixtures/legacyGlob.js";

const matches = (pattern: string, path: string) => compileGlob(pattern).matches(path);

test("DeerFlow's PurePosixPath.match semantics: right-anchored relative patterns, absolute ones from the root, ** any depth", () => {
  const cases: Array<[string, string, boolean]> = [
    ["*.py", "a.py", true],
    ["*.py", "src/deep/a.py", true],
    ["*.py", "a.pyc", false],
    ["src/*.py", "app/src/x.py", true],
    ["src/*.py", "src/sub/x.py", false],
    ["/src/*.py", "src/x.py", true],
    ["/src/*.py", "app/src/x.py", false],
    ["**/*.py", "a.py", true],
    ["**/*.py", "a/b/c/d.py", true],
    ["src/**/test_*.py", "src/test_a.py", true],
    ["src/**/test_*.py", "x/src/a/b/test_a.py", true],
    ["src/**/test_*.py", "src/a/b/a_test.py", false],
    ["**", "anything/at/all", true],
    ["a/**/b/**/c", "a/x/b/y/z/c", true],
    ["a/**/b/**/c", "a/x/c/y/b", false],
    ["?.md", "a.md", true],
    ["?.md", "ab.md", false],
    ["[abc].txt", "b.txt", true],
    ["[abc].txt", "d.txt", false],
    ["[!abc].txt", "d.txt", true],
    ["[!abc].txt", "a.txt", false],
    ["[a-c]x", "bx", true],
    ["[a-c]x", "dx", false],
    ["[]]", "]", true],
    ["[!]]", "a", true],
    ["[-a]", "-", true],
    ["[a", "[a", true],
    ["a**b", "axxb", true],
    ["a**b", "a/b", false],
    ["CASE.md", "case.md", false],
    ["", "a", false],
    [".", "a", false],
    ["./*.ts", "x.ts", true],
    ["?", "😀", true],
    ["[😀]x", "😀x", true],
  ];
  for (const [pattern, path, expected] of cases) assert.equal(matches(pattern, path), expected, `${pattern} vs ${path}`);
});

test("on ordinary patterns it agrees with the regex matcher it replaced", () => {
  const patterns = ["*.py", "**/*.ts", "src/*.js", "/src/**", "**/test_*.py", "*_test.go", "a?c.txt", "[ab]*.md", "**/node/**/*.json", "docs/*", "*", "**", "x/**/y", "*.tar.gz", "[!.]*"];
  const paths = ["a.py", "src/a.js", "src/lib/b.ts", "x/y", "x/z/y", "docs/readme.md", "pkg/util_test.go", "abc.txt", "b.md", ".hidden", "deep/node/x/y/p.json", "f.tar.gz", "tests/test_one.py", "src"];
  for (const p of patterns) for (const path of paths) assert.equal(matches(p, path), legacyPathMatches(p, path), `${p} vs ${path}`);
});

test("patterns that made the backtracking matcher run for minutes answer at once", () => {
  const long = "a".repeat(250);
  assert.equal(matches("*a*a*a*a*a*a*a*a*b", long), false);
  assert.equal(matches("*a*a*a*a*a*a*a*a*a", long), true);
  assert.equal(matches("*a*a*a*a*a*a*a*a*b", `${long}b`), true);
  const deep = Array.from({ length: 200 }, () => "a").join("/");
  assert.equal(matches("**/a/**/a/**/a/**/a/**/a/**/b", deep), false);
  assert.equal(matches("**/a/**/a/**/a/**/a/**/a/**/a", deep), true);
});

test("caps on '*', '**' and length: a GlobPatternError that says what to change", () => {
  assert.doesNotThrow(() => compileGlob("*a".repeat(MAX_GLOB_STARS)));
  assert.throws(() => compileGlob("*a".repeat(MAX_GLOB_STARS + 1)), (err: unknown) => {
    assert.ok(err instanceof GlobPatternError);
    assert.match(err.message, new RegExp(`${MAX_GLOB_STARS + 1} '\\*'.*at most ${MAX_GLOB_STARS} '\\*' and ${MAX_GLOB_GLOBSTARS} '\\*\\*'`));
    return true;
  });
  assert.doesNotThrow(() => compileGlob(Array.from({ length: MAX_GLOB_GLOBSTARS }, (_, i) => `**/d${i}`).join("/")));
  assert.throws(() => compileGlob(Array.from({ length: MAX_GLOB_GLOBSTARS + 1 }, (_, i) => `**/d${i}`).join("/")), GlobPatternError);
  // `**/**` is one `**`, and a run of stars inside a segment is one star.
  assert.doesNotThrow(() => compileGlob("**/".repeat(MAX_GLOB_GLOBSTARS * 3) + "x"));
  assert.doesNotThrow(() => compileGlob(`a${"*".repeat(MAX_GLOB_STARS * 3)}b`));
  assert.throws(() => compileGlob("a".repeat(MAX_GLOB_PATTERN_CHARS + 1)), /at most 1000 are allowed/);
  assert.throws(() => pathMatches("*a".repeat(MAX_GLOB_STARS + 1), "a"), GlobPatternError);
});

test("the fixed ignore list goes through the same matcher", () => {
  for (const name of ["node_modules", ".git", "pkg.egg-info", "x.swp", "notes~", ".upload-1.part", "debug.log"]) assert.equal(shouldIgnoreName(name), true, name);
  for (const name of ["src", "egg-info", "log", "upload-1.part", "a.py"]) assert.equal(shouldIgnoreName(name), false, name);
});
