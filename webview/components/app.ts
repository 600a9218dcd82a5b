/**
 * The panel's layout: header (title, threads, run status), the message list, the thread's side
 * lists, the composer, and a dismissible notice for host errors. `render` is called at most once
 * per animation frame with the latest state; each part compares its slice by identity and
 * leaves its DOM alone when nothing changed.
 */
import type { WebviewToHost } from "../../extension/protocol/webview.js";
import type { PanelState } from "../store.js";
import { isRunActive } from "../store.js";
import { Composer } from "./composer.js";
import { ContinueBar } from "./continueBar.js";
import { h, iconButton, setText } from "./dom.js";
import { Header } from "./header.js";
import { MessageList } from "./messageList.js";
import { ThreadPanels } from "./threadPanels.js";
import { SkillsSection } from "./skillsSection.js";
import { McpSection } from "./mcpSection.js";
import { RunFailure } from "./runFailure.js";
import { ModelSetup } from "./modelSetup.js";

export class App {
  private readonly header: Header;
  private readonly list: MessageList;
  private readonly panels: ThreadPanels;
  private readonly skills: SkillsSection;
  private readonly mcp: McpSection;
  private readonly composer: Composer;
  private readonly continueBar: ContinueBar;
  private readonly failure: RunFailure;
  private readonly setup: ModelSetup;
  private model: string | null = null;
  private readonly noticeText = h("span", { class: "notice-text" });
  private readonly notice: HTMLElement;

  /**
   * `continueRun`: Continue was pressed (main.ts marks it in the store and tells the host).
   * `beforeComposer`: parts that draw themselves (the review area), placed above the composer.
   */
  constructor(root: HTMLElement, post: (m: WebviewToHost) => void, schedule: () => void, dismiss: () => void, continueRun: () => void, beforeComposer: readonly HTMLElement[] = []) {
    this.header = new Header(post);
    this.list = new MessageList(schedule);
    this.panels = new ThreadPanels(post);
    this.skills = new SkillsSection(post);
    this.mcp = new McpSection(post);
    this.setup = new ModelSetup(post, () => this.model);
    this.composer = new Composer(post, () => this.setup.holdDraft());
    this.continueBar = new ContinueBar(continueRun);
    this.failure = new RunFailure(post);
    // role=alert only while shown (render): nothing in the panel is an alert before something went wrong.
    this.notice = h("div", { id: "notice", testid: "notice", class: "notice", attrs: { hidden: true } },
      this.noticeText, iconButton("close", "Dismiss", dismiss, "dismiss-notice"));
    root.replaceChildren(
      h("div", { class: "panel" },
        this.header.root,
        this.notice,
        h("main", { class: "messages-wrap" }, this.list.root, this.list.jumpButton),
        this.panels.root,
        this.skills.root,
        this.mcp.root,
        ...beforeComposer,
        this.failure.root,
        this.setup.root,
        this.continueBar.root,
        this.composer.root,
      ),
    );
  }

  render(s: PanelState): void {
    this.header.update(s);
    this.notice.hidden = s.notice === null;
    if (s.notice === null) this.notice.removeAttribute("role");
    else this.notice.setAttribute("role", "alert");
    setText(this.noticeText, s.notice ?? "");
    this.panels.update(s);
    this.skills.update(s);
    this.mcp.update(s);
    this.composer.update(s);
    this.failure.update(s);
    this.model = s.model;
    this.setup.update(s);
    this.continueBar.update(s);
    // The list last: the parts above and below may have changed size, and the list lays out (and
    // pins to the bottom) against its final viewport height.
    const empty = s.threadId === null ? "Start a conversation: type a message below." : s.thread ? "No messages yet." : "Loading thread…";
    this.list.update(s.thread, isRunActive(s), empty);
  }

  focusInput(): void {
    this.composer.input.focus();
  }
}
