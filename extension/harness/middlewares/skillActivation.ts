/**
 * SkillActivationMiddleware (DeerFlow `skill_activation_middleware.py`, chain slot [15]): when the
 * user's message starts with `/skill-name`, that skill's SKILL.md reaches the model as DeerFlow's
 * hidden `<slash_skill_activation>` message (skills/activation.ts), once per run; when the skill
 * cannot be activated, DeerFlow's answer ends the turn without a model call.
 *
 * Where we differ from DeerFlow, on purpose: DeerFlow injects the message into the first model
 * request only (`wrap_model_call`) and remembers the activation in the run's context, so from the
 * second model call of the turn on, the model no longer sees the skill it is following. Here the
 * message is written to the thread once, in `before_agent` (a node every run has: no extra step),
 * right after the user's message, so:
 * - every model call of the turn, and a run that carries an approval decision for it, sees the
 *   same bytes, and the system prompt's cached prefix is untouched;
 * - the checkpoint and the journal (the `before_agent` update, and a `custom` `skill_activated`
 *   event with name, path and sha256) hold exactly what the model was given: a replay shows the
 *   same bytes even if the file changed since;
 * - the tool policy (SkillToolPolicy [16]) finds the turn's activation in the state.
 * "Once per run": a run whose latest genuine user message already has its activation adds none.
 *
 * The message is hidden (`hide_from_ui`), so the panel, the title and memory skip it; the user's
 * own message stays as typed (InputSanitization frames it in the request as usual).
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import type { SkillCatalog } from "../skills/catalog.js";
import { activationText, resolveActivation, type Activation } from "../skills/activation.js";
import { contentText, isGenuineUserMessage, ORIGINAL_USER_CONTENT_KEY } from "./shared/messages.js";

export const SLASH_ACTIVATION_KEY = "slash_skill_activation";
const TARGET_KEY = "slash_skill_activation_target_id";
/** What the activation message records about itself (the tool policy reads `path`). */
const SKILL_KEY = "slash_skill";

export interface SkillActivationOptions {
  catalog: SkillCatalog;
  /** The skills this agent may activate (a subagent's `skills`); null = every enabled skill. */
  available: ReadonlySet<string> | null;
}

/** An activation message's target (the user message's id) and the activated SKILL.md's path. */
export function activationOf(m: BaseMessage): { target: string | undefined; path: string; name: string; sha256: string } | undefined {
  if (m.getType() !== "human" || m.additional_kwargs[SLASH_ACTIVATION_KEY] !== true) return undefined;
  const s = m.additional_kwargs[SKILL_KEY] as { path?: unknown; name?: unknown; sha256?: unknown } | undefined;
  if (!s || typeof s.path !== "string") return undefined;
  const target = m.additional_kwargs[TARGET_KEY];
  return { target: typeof target === "string" ? target : undefined, path: s.path, name: typeof s.name === "string" ? s.name : "", sha256: typeof s.sha256 === "string" ? s.sha256 : "" };
}

/** DeerFlow's `_make_activation_message`: id `<target>__slash_activation`, hidden. */
export function activationMessage(target: BaseMessage, a: Activation): HumanMessage {
  return new HumanMessage({
    content: activationText(a),
    ...(target.id ? { id: `${target.id}__slash_activation` } : {}),
    additional_kwargs: {
      hide_from_ui: true,
      [SLASH_ACTIVATION_KEY]: true,
      ...(target.id ? { [TARGET_KEY]: target.id } : {}),
      [SKILL_KEY]: { name: a.skill.meta.name, scope: a.skill.scope, path: a.skill.location, sha256: a.sha256 },
    },
  });
}

/** The genuine user text (before Uploads' preamble), as DeerFlow's get_original_user_content_text. */
function userText(m: BaseMessage): string {
  const original = m.additional_kwargs[ORIGINAL_USER_CONTENT_KEY];
  return typeof original === "string" ? original : contentText(m.content);
}

export function skillActivationMiddleware(o: SkillActivationOptions) {
  return createMiddleware({
    name: "SkillActivationMiddleware",
    beforeAgent: {
      canJumpTo: ["end"],
      hook: async (state, runtime) => {
        const messages = (state as { messages: BaseMessage[] }).messages;
        let at = -1;
        for (let i = messages.length - 1; i >= 0; i--) {
          if (isGenuineUserMessage(messages[i]!)) {
            at = i;
            break;
          }
        }
        if (at < 0) return undefined;
        const target = messages[at]!;
        // Already activated (this turn's earlier run, e.g. before an approval), or answered.
        if (messages.slice(at + 1).some((m) => activationOf(m)?.target === target.id || m.getType() === "ai")) return undefined;
        const resolved = await resolveActivation(userText(target), o.catalog, o.available);
        if (!resolved) return undefined;
        if ("failure" in resolved) return { messages: [new AIMessage({ content: resolved.failure })], jumpTo: "end" as const };
        const a = resolved.activation;
        runtime.writer?.({ type: "skill_activated", name: a.skill.meta.name, scope: a.skill.scope, path: a.skill.location, sha256: a.sha256 });
        return { messages: [activationMessage(target, a)] };
      },
    },
  });
}
