// Issue 33 item 1 (4): a skill's /mnt/skills path keeps its nesting below the root (DeerFlow's
// get_container_path), found by a real walk of real folders; and two roots of one scope never
// give two skills the same folder, or one inside the other.
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCatalog } from "../../../extension/harness/skills/catalog.js";
import { discoverSkills } from "../../../extension/harness/skills/discover.js";

function skill(root: string, rel: string, name: string): void {
  mkdirSync(join(root, rel), { recursive: true });
  writeFileSync(join(root, rel, "SKILL.md"), `---\nname: ${name}\ndescription: ${name}. Use when asked.\n---\n`);
}

test("nesting is kept per category, and a path another root of the scope holds (or nests in) moves aside", async () => {
  const base = mkdtempSync(join(tmpdir(), "deerflow-skills-nesting-"));
  skill(join(base, "deerflow", "custom"), "team/helper", "team-helper");
  skill(join(base, "deerflow", "public"), "deep-research", "deep-research");
  skill(join(base, "one"), "team", "team");
  skill(join(base, "two"), "team/helper", "other-helper");
  const discovery = await discoverSkills([
    { path: join(base, "deerflow", "custom"), scope: "custom" },
    { path: join(base, "deerflow", "public"), scope: "public" },
    { path: join(base, "one"), scope: "user" },
    { path: join(base, "two"), scope: "user" },
  ]);
  const catalog = buildCatalog(discovery, { disabled: new Set(), diagnostics: [] });
  const at = Object.fromEntries(catalog.skills.map((s) => [s.meta.name, s.location]));
  assert.deepEqual(at, {
    "deep-research": "/mnt/skills/public/deep-research/SKILL.md",
    "other-helper": "/mnt/skills/user/team-2/helper/SKILL.md",
    team: "/mnt/skills/user/team/SKILL.md",
    "team-helper": "/mnt/skills/custom/team/helper/SKILL.md",
  });
});
