/**
 * The Skills section (issue 24): the workspace's loaded skills with their scope, an Enabled toggle
 * (DeerFlow's `skills.<name>.enabled`, from the next run on) and "Open SKILL.md". Collapsed by
 * default; always present, with "No skills" and Add Skill… (the host writes a SKILL.md to start
 * from) when there is none (issue 30 item 5); redrawn only when the list changed identity.
 */
import type { PanelSkill, WebviewToHost } from "../../extension/protocol/webview.js";
import type { PanelState } from "../store.js";
import { h, iconButton, setText } from "./dom.js";

interface CheckboxLike extends HTMLElement {
  checked: boolean;
}

export class SkillsSection {
  private readonly count = h("span", { class: "section-count" });
  private readonly list = h("ul", { id: "skills", testid: "skills", class: "skill-list", attrs: { "aria-label": "Skills" } });
  private readonly empty = h("p", { class: "section-empty muted", testid: "skills-empty", text: "No skills. A skill is a folder with a SKILL.md (in .agents/skills, .claude/skills, …) that the agent can use." });
  readonly root: HTMLDetailsElement;
  private last: readonly PanelSkill[] | undefined;

  constructor(private readonly post: (m: WebviewToHost) => void) {
    this.root = h("details", { id: "skills-section", testid: "skills-section", class: "thread-section" },
      h("summary", {}, h("span", { class: "section-label", text: "Skills" }), this.count),
      h("div", { class: "section-body" }, this.list, this.empty,
        h("div", { class: "section-actions" },
          iconButton("add", "Add Skill…", () => this.post({ type: "addSkill" }), "add-skill"),
          iconButton("refresh", "Refresh skills", () => this.post({ type: "refreshSkills" }), "refresh-skills"))));
  }

  update(s: PanelState): void {
    if (s.skills === this.last) return;
    this.last = s.skills;
    this.empty.hidden = s.skills.length > 0;
    this.list.hidden = s.skills.length === 0;
    setText(this.count, s.skills.length === 0 ? "none" : `${s.skills.filter((x) => x.enabled).length}/${s.skills.length}`);
    this.list.replaceChildren(...s.skills.map((skill) => this.row(skill)));
  }

  private row(skill: PanelSkill): HTMLElement {
    const toggle = h("vscode-checkbox", {
      testid: "skill-enabled",
      attrs: { toggle: true, label: "Enabled", "aria-label": `Enable ${skill.name}`, checked: skill.enabled },
    }) as CheckboxLike;
    toggle.addEventListener("change", () => this.post({ type: "setSkillEnabled", name: skill.name, enabled: toggle.checked }));
    const problems = skill.problems > 0 ? ` · ${skill.problems} warning${skill.problems === 1 ? "" : "s"} (deerflow skills list)` : "";
    return h("li", { class: `skill${skill.enabled ? "" : " disabled"}`, testid: "skill", attrs: { "data-name": skill.name, "data-enabled": String(skill.enabled), title: `${skill.description}${problems}` } },
      h("span", { class: "skill-name", text: skill.name }),
      h("span", { class: "skill-scope muted", text: skill.scope }),
      h("span", { class: "spacer" }),
      toggle,
      iconButton("go-to-file", `Open SKILL.md of ${skill.name}`, () => this.post({ type: "openSkill", name: skill.name }), "open-skill"));
  }
}
