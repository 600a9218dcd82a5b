/**
 * DeerFlow's `skills:` configuration section (`config/skills_config.py`), as the harness's config
 * file takes it (config/harnessConfig.ts). Its own module so the config schema does not pull in
 * the skills subsystem.
 */
import { z } from "zod";
import { SKILLS_VIRTUAL_PATH } from "../sandbox/paths.js";

export const SkillsConfigZ = z
  .object({
    /** DeerFlow's skills root: its custom/ and public/ categories are searched (DEER_FLOW_SKILLS_PATH when absent). */
    path: z.string().min(1).optional(),
    /** DeerFlow's container_path: only its default is supported, the sandbox's paths are fixed. */
    container_path: z.literal(SKILLS_VIRTUAL_PATH, { message: `only ${SKILLS_VIRTUAL_PATH} is supported here` }).optional(),
    /** true: `<skill_index>` + describe_skill always; false: never; absent: past the catalogue size (skills/prompt.ts). */
    deferred_discovery: z.boolean().optional(),
  })
  .strict();
export type SkillsConfig = z.infer<typeof SkillsConfigZ>;
