// The editor's language models and a remote harness (issue 31 item 6): `lm/chat` from the local
// harness is served; from a remote `deerflow serve` only when the user listed that server in
// deerflow.harness.shareEditorModels, else refused with a message naming the setting.
import { test } from "node:test";
import assert from "node:assert/strict";
import { lmChatRefusal, SHARE_SETTING } from "../../../extension/host/lm/share.js";
import type { HarnessSource } from "../../../extension/host/harnessSupport.js";

const remote = (url: string): HarnessSource => ({ kind: "remote", url, shown: url });

test("the local harness may always use the editor's models", () => {
  assert.equal(lmChatRefusal({ kind: "local" }, undefined), undefined);
  assert.equal(lmChatRefusal({ kind: "local" }, []), undefined);
});

test("a remote harness is refused unless the setting lists it: the refusal says which server and how to allow it", () => {
  const why = lmChatRefusal(remote("https://build-box:2024"), []);
  assert.ok(why);
  assert.match(why, /remote harness https:\/\/build-box:2024 asked to use this editor's language models/);
  assert.ok(why.includes(`add "https://build-box:2024" to the user setting deerflow.${SHARE_SETTING}`), why);
  assert.ok(lmChatRefusal(remote("https://build-box:2024"), undefined), "no setting: refused");
  assert.ok(lmChatRefusal(remote("https://build-box:2024"), true), "a boolean is not a list of servers");
  assert.ok(lmChatRefusal(remote("https://build-box:2024"), ["https://other-box:2024", "not a url", 7]), "another server's entry does not cover this one");
  assert.ok(lmChatRefusal(remote("https://build-box:2024"), ["http://build-box:2024"]), "the scheme is part of the server");
});

test("a listed server may: matched as the URL shows (trailing slash, credentials and case of the host do not matter)", () => {
  assert.equal(lmChatRefusal(remote("https://build-box:2024"), ["https://build-box:2024"]), undefined);
  assert.equal(lmChatRefusal(remote("https://user:pw@Build-Box:2024/"), [" https://build-box:2024/ "]), undefined);
  assert.equal(lmChatRefusal(remote("https://box/deerflow"), ["https://box/deerflow/"]), undefined);
  assert.ok(lmChatRefusal(remote("https://box/deerflow"), ["https://box/"]), "another path is another server");
});
