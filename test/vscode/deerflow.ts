/**
 * What the VS Code suites and the bench share about the DeerFlow extension: its names in the
 * workbench, the panel's accessible names and test ids, and one launch of code-server + chromium
 * with the extension installed (a link into a fresh extensions dir, or a VSIX), wired to a scripted
 * model server.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { FrameLocator, Locator, Page } from "playwright-core";
import { launchCodeServer, repoRoot } from "./launch.js";
import type { CodeServer, ExtensionSource } from "./launch.js";
import { launchBrowser, openWorkbench, runCommand, webview } from "./workbench.js";
import type { Browser, WorkbenchTimings } from "./workbench.js";
import type { ModelServer } from "../fixtures/modelServer.js";

export const CONTAINER_TITLE = "DeerFlow";
export const OPEN_PANEL = "DeerFlow: Open Panel";

/**
 * Fails with a message a person can act on when the extension is not built: a missing extension
 * must fail the VS Code suites, never skip them.
 */
export function assertExtensionBuilt(): void {
  const pkg = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
    main?: string;
    contributes?: { viewsContainers?: { activitybar?: Array<{ title?: string }> }; commands?: Array<{ command: string; title: string; category?: string }> };
  };
  const problems: string[] = [];
  if (!pkg.main) problems.push('package.json has no "main" (the extension host bundle)');
  else if (!existsSync(join(repoRoot, pkg.main))) problems.push(`${pkg.main} does not exist (run npm run build)`);
  if (!existsSync(join(repoRoot, "dist", "webview.js"))) problems.push("dist/webview.js does not exist (run npm run build)");
  if (!pkg.contributes?.viewsContainers?.activitybar?.some((c) => c.title === CONTAINER_TITLE)) {
    problems.push(`package.json contributes no activity-bar container titled "${CONTAINER_TITLE}"`);
  }
  if (!pkg.contributes?.commands?.some((c) => c.category === "DeerFlow" && c.title === "Open Panel")) {
    problems.push('package.json contributes no command "DeerFlow: Open Panel"');
  }
  if (problems.length > 0) throw new Error(`The DeerFlow extension is not ready for VS Code tests:\n  - ${problems.join("\n  - ")}`);
}

export interface DeerFlowSession {
  readonly cs: CodeServer;
  readonly browser: Browser;
  readonly page: Page;
  /** Timings of the first workbench load. */
  readonly firstLoad: WorkbenchTimings;
  close(): Promise<void>;
}

/**
 * code-server with the extension, its harness pointed at `model`, and a browser on the workbench.
 * By default the repo is linked into the extensions dir as an installed extension (DEERFLOW_VSIX
 * installs that VSIX instead): the workbench is the one a person gets. Development mode would need
 * the smoke-test driver on 1.139, which hides notification toasts and modal editors.
 */
export async function startDeerFlow(opts: {
  model: ModelServer;
  label: string;
  workspaceFiles?: Readonly<Record<string, string | Uint8Array>>;
  extension?: ExtensionSource;
  /** More environment for code-server (and so the harness). */
  env?: Readonly<Record<string, string>>;
  /** User settings for the workbench (merged over the quiet defaults). */
  settings?: Readonly<Record<string, unknown>>;
  /** The user's keybindings.json (launch.ts). */
  keybindings?: ReadonlyArray<Readonly<Record<string, unknown>>>;
}): Promise<DeerFlowSession> {
  assertExtensionBuilt();
  const extension = opts.extension ?? (process.env.DEERFLOW_VSIX ? { kind: "vsix", path: process.env.DEERFLOW_VSIX } : { kind: "link", path: repoRoot });
  const cs = await launchCodeServer({
    extension,
    label: opts.label,
    // Nothing configured in deerflow.models: the extension falls back to these (the harness inherits them).
    env: { OPENAI_BASE_URL: opts.model.url, OPENAI_API_KEY: "sk-e2e-not-a-key", OPENAI_MODEL: "scripted-e2e", ...opts.env },
    ...(opts.workspaceFiles ? { workspaceFiles: opts.workspaceFiles } : {}),
    ...(opts.settings ? { settings: opts.settings } : {}),
    ...(opts.keybindings ? { keybindings: opts.keybindings } : {}),
  });
  let browser: Browser | undefined;
  try {
    browser = await launchBrowser();
    const firstLoad = await openWorkbench(browser.page, cs.url, CONTAINER_TITLE);
    const b = browser;
    return {
      cs,
      browser: b,
      page: b.page,
      firstLoad,
      close: async () => {
        await b.close();
        await cs.cleanup();
      },
    };
  } catch (e) {
    await browser?.close();
    const log = cs.log().split("\n").slice(-40).join("\n");
    await cs.cleanup();
    throw new Error(`${e instanceof Error ? e.message : String(e)}\n--- code-server log (tail) ---\n${log}`, { cause: e });
  }
}

/** The panel's parts, by the accessible names and test ids the webview promises. */
export class Panel {
  readonly view: FrameLocator;
  constructor(readonly page: Page) {
    this.view = webview(page);
  }
  get messageBox(): Locator {
    return this.view.getByRole("textbox", { name: "Message" });
  }
  get sendButton(): Locator {
    return this.view.getByRole("button", { name: "Send" });
  }
  get cancelButton(): Locator {
    return this.view.getByRole("button", { name: "Cancel" });
  }
  get messages(): Locator {
    return this.view.getByTestId("messages");
  }
  message(role: "human" | "ai" | "tool", hasText?: string | RegExp): Locator {
    const all = this.messages.locator(`[data-role="${role}"]`);
    return hasText === undefined ? all : all.filter({ hasText });
  }
  get toolCalls(): Locator {
    return this.view.getByTestId("tool-call");
  }
  get artifacts(): Locator {
    return this.view.getByTestId("artifacts");
  }
  get viewedImages(): Locator {
    return this.view.getByTestId("viewed-images");
  }
  get runStatus(): Locator {
    return this.view.getByTestId("run-status");
  }
  /** The run status shows `status` (as text, or as a data-status attribute). */
  status(status: string): Locator {
    return this.runStatus.filter({ hasText: new RegExp(`\\b${status}\\b`, "i") }).or(this.view.locator(`[data-testid="run-status"][data-status="${status}"]`));
  }

  /** Opens the panel from the command palette and waits for its message box. */
  async open(timeoutMs = 60_000): Promise<void> {
    await runCommand(this.page, OPEN_PANEL);
    await this.messageBox.waitFor({ state: "visible", timeout: timeoutMs });
  }

  /** Types the prompt into the message box and presses Send; waits until the prompt shows as a human message. */
  async send(prompt: string): Promise<void> {
    await this.submit(prompt);
    await this.message("human", prompt.slice(0, 40)).first().waitFor({ state: "visible", timeout: 15_000 });
  }

  /** Types the prompt and presses Send, without waiting for the run to show it (a refused run never does). */
  async submit(prompt: string): Promise<void> {
    const box = this.messageBox;
    await box.click();
    try {
      await box.fill(prompt, { timeout: 5_000 });
    } catch {
      // A custom element (vscode-textarea) exposes the role on its host: type into the focused inner field.
      await this.page.keyboard.insertText(prompt);
    }
    await this.sendButton.click();
  }
}
