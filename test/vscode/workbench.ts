/**
 * Drives the web workbench code-server serves, in Debian's chromium through playwright-core (no
 * browser download). One browser per suite; every wait is on a selector or an event.
 *
 * Selectors that hold in VS Code 1.100 and 1.139 alike (see ../shared/recipes/vscode-e2e/README.md;
 * checked on code-server 4.100.3 and 4.139.1):
 *   - `.monaco-workbench` once the workbench rendered;
 *   - `.activitybar a.action-label[aria-label="<container title>"]` once the extension host scanned
 *     the extension (the `li[role=tab]` around it has an empty aria-label in both);
 *   - F1 → `.quick-input-widget input` → `>Category: Title` → Enter runs a command;
 *   - a webview view is `iframe.webview.ready` (host shim) → `iframe#active-frame` (our HTML); in
 *     1.139 the inner frame shows a few seconds after the outer one is ready (its service worker);
 *   - an editor tab is `.tabs-container .tab`, named by its whole label (see editorTab).
 */
import { chromium } from "playwright-core";
import type { BrowserContext, ConsoleMessage, Frame, FrameLocator, Page } from "playwright-core";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { processTreeRssMiB, repoRoot } from "./launch.js";
import { defaultCodeServer } from "./codeServers.js";

export const CHROMIUM = process.env.DEERFLOW_CHROMIUM ?? "/usr/bin/chromium";
export const CHROMIUM_ARGS = [
  "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync",
];
/** One folder per code-server version, so a run over both keeps both sets of screenshots. */
export const SCREENSHOT_DIR = join(repoRoot, "test-results", "vscode", defaultCodeServer());

export interface Browser {
  readonly context: BrowserContext;
  readonly page: Page;
  /** Console errors from the workbench page (404s for the Microsoft-only vsda module are dropped). */
  readonly consoleErrors: string[];
  /** Summed RSS of the chromium processes this browser started. */
  rssMiB(): number;
  close(): Promise<void>;
}

export async function launchBrowser(): Promise<Browser> {
  // Playwright refuses --user-data-dir in args; a persistent context on a fresh dir is the way.
  const profile = mkdtempSync(join(tmpdir(), "deerflow-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 900 },
    // The panel's Copy buttons write the clipboard; the tests read it back.
    permissions: ["clipboard-read", "clipboard-write"],
    args: CHROMIUM_ARGS,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const consoleErrors: string[] = [];
  page.on("console", (m: ConsoleMessage) => {
    if (m.type() === "error" && !/vsda|status of 404/.test(m.text())) consoleErrors.push(m.text().slice(0, 300));
  });
  let closed: Promise<void> | undefined;
  return {
    context,
    page,
    consoleErrors,
    // chromium is a child of this process (playwright spawns it); count only its tree.
    rssMiB: () => processTreeRssMiB(process.pid, (cmd) => cmd.includes("chromium")),
    close: () => {
      closed ??= context.close().finally(() => rmSync(profile, { recursive: true, force: true }));
      return closed;
    },
  };
}

export interface WorkbenchTimings {
  /** goto → `.monaco-workbench` visible */
  workbenchMs: number;
  /** goto → the extension's activity-bar entry (the extension host scanned it) */
  activityBarMs: number;
}

/** Opens (or reloads) the workbench and waits until the extension's container is in the activity bar. */
export async function openWorkbench(page: Page, url: string | undefined, containerTitle: string, timeoutMs = 90_000): Promise<WorkbenchTimings> {
  const t0 = performance.now();
  if (url) await page.goto(url, { waitUntil: "domcontentloaded" });
  else await page.reload({ waitUntil: "domcontentloaded" });
  await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: timeoutMs });
  const workbenchMs = performance.now() - t0;
  await activityBarEntry(page, containerTitle).waitFor({ state: "visible", timeout: timeoutMs });
  return { workbenchMs, activityBarMs: performance.now() - t0 };
}

export function activityBarEntry(page: Page, containerTitle: string) {
  return page.locator(`.activitybar a.action-label[aria-label="${containerTitle}"]`);
}

/**
 * Runs a command from the palette: F1, `>Category: Title`, the matching row focused, Enter.
 * The palette lists the commands known when it opens; right after a window reload the
 * extension's commands may not be registered yet (the activity bar is restored from the last
 * session before the extension host is up), so an attempt whose row does not show within 5 s
 * closes the palette and opens it again, until `timeoutMs`.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 60_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  const input = page.locator(".quick-input-widget input[type='text']");
  // Wait for the exact row to be the focused one, so Enter runs this command and not a neighbour.
  const row = page.locator(".quick-input-list .monaco-list-row.focused", { hasText: title }).first();
  for (;;) {
    await page.keyboard.press("F1");
    await input.waitFor({ state: "visible", timeout: 15_000 });
    await input.fill(`>${title}`);
    try {
      await row.waitFor({ state: "visible", timeout: Math.max(1, Math.min(5_000, deadline - performance.now())) });
      break;
    } catch (e) {
      await page.keyboard.press("Escape");
      await input.waitFor({ state: "hidden", timeout: 15_000 });
      if (performance.now() >= deadline) throw new Error(`the command palette never offered "${title}"`, { cause: e });
    }
  }
  await page.keyboard.press("Enter");
  await input.waitFor({ state: "hidden", timeout: 15_000 });
}

/** The HTML of the (single) visible webview view. */
export function webview(page: Page): FrameLocator {
  return page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
}

/** The webview's Frame, for `evaluate` (PerformanceObserver, rAF probes). */
export async function webviewFrame(page: Page, timeoutMs = 30_000): Promise<Frame> {
  const outer = page.locator("iframe.webview.ready");
  await outer.waitFor({ state: "attached", timeout: timeoutMs });
  const outerFrame = await (await outer.elementHandle())?.contentFrame();
  if (!outerFrame) throw new Error("the webview's outer iframe has no frame");
  const inner = outerFrame.locator("iframe#active-frame");
  await inner.waitFor({ state: "attached", timeout: timeoutMs });
  const frame = await (await inner.elementHandle())?.contentFrame();
  if (!frame) throw new Error("the webview's active frame has no frame");
  return frame;
}

/**
 * An editor tab whose label is `name` (e.g. "report.md"). The whole label container is matched:
 * 1.139 splits a file name into `.label-name` "report" and `.label-suffix` ".md"; 1.100 does not.
 */
export function editorTab(page: Page, name: string) {
  return page.locator(".tabs-container .tab", { has: page.locator(".monaco-icon-label-container", { hasText: name }) });
}

/** Saves a screenshot of the whole workbench into test-results/vscode/<version>/<name>.png; returns the path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path });
  return path;
}
