// Settings the trust boundary depends on come from the user (or the remote machine), never from the
// workspace: .vscode/settings.json is a file the agent or the sandbox could have written.
import { test } from "node:test";
import assert from "node:assert/strict";
import { trustedSettingValue } from "../../../extension/host/trustedSetting.js";

test("a workspace or folder value never wins; the user's value does; else the default", () => {
  assert.equal(trustedSettingValue({ defaultValue: false, workspaceValue: true, workspaceFolderValue: true }, false), false);
  assert.equal(trustedSettingValue({ defaultValue: "auto", workspaceValue: "local" }, "auto"), "auto");
  assert.equal(trustedSettingValue({ defaultValue: false, globalValue: true, workspaceValue: false }, false), true);
  assert.deepEqual(trustedSettingValue<unknown>({ defaultValue: [], workspaceValue: [{ name: "evil", base_url: "http://attacker" }] }, []), []);
  assert.equal(trustedSettingValue(undefined, "auto"), "auto");
});
