/**
 * What every e2e suite does around its steps: a failing step leaves a screenshot and the
 * workbench's logs (extension host, the extension's LogOutputChannel, code-server) in
 * test-results/vscode/<version>/FAILED-<prefix><name>*, and a wait that times out fails with a
 * sentence about the product, not a selector.
 */
import { cpSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Locator } from "playwright-core";
import type { DeerFlowSession } from "../deerflow.js";
import { SCREENSHOT_DIR, screenshot } from "../workbench.js";

/** `step(name, fn)` for a suite whose session is `session()` (undefined before it started). */
export function failureCapture(session: () => DeerFlowSession | undefined, prefix = "") {
  return async function step(name: string, fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      const df = session();
      if (df) {
        await screenshot(df.page, `FAILED-${prefix}${name}`).catch(() => undefined);
        const logs = join(SCREENSHOT_DIR, `FAILED-${prefix}${name}-logs`);
        rmSync(logs, { recursive: true, force: true });
        cpSync(join(df.cs.userDataDir, "logs"), logs, { recursive: true });
        writeFileSync(join(logs, "code-server.log"), df.cs.log());
      }
      throw e;
    }
  };
}

/** Waits for `locator`; a timeout fails with `what` (a sentence about the product), not a selector. */
export async function shows(locator: Locator, what: string, timeout = 30_000): Promise<void> {
  try {
    await locator.waitFor({ state: "visible", timeout });
  } catch (e) {
    throw new Error(`Not seen within ${timeout / 1000} s: ${what}.`, { cause: e });
  }
}
