/**
 * The schema of every WebviewToHost message. A webview is untrusted input (its content renders
 * model output), so nothing it sends is acted on before it parses here. The compile-time check
 * below keeps the schema and the protocol type in step: adding a message to webview.ts without a
 * schema here fails `tsc`.
 */
import { z } from "zod";
import type { WebviewToHost } from "../../protocol/webview.js";
import { REVIEW_MESSAGE_SCHEMAS } from "../review/messages.js";

const id = z.string().min(1).max(200);
/** Virtual paths only: the webview never names a host path. */
const virtualPath = z.string().startsWith("/mnt/user-data/").max(4096);

export const WebviewToHostZ = z.discriminatedUnion("type", [
  z.object({ type: z.literal("ready"), threadId: id.optional(), lastSeq: z.number().int().min(0).optional() }),
  z.object({ type: z.literal("send"), text: z.string().min(1).max(200_000) }),
  z.object({ type: z.literal("cancel") }),
  z.object({ type: z.literal("continueRun") }),
  z.object({ type: z.literal("attachFiles") }),
  z.object({ type: z.literal("removeAttachment"), index: z.number().int().min(0) }),
  z.object({ type: z.literal("newThread") }),
  z.object({ type: z.literal("selectThread"), threadId: id }),
  z.object({ type: z.literal("renameThread"), threadId: id, title: z.string().trim().min(1).max(500) }),
  z.object({ type: z.literal("deleteThread"), threadId: id }),
  z.object({ type: z.literal("openArtifact"), path: virtualPath }),
  z.object({ type: z.literal("revealArtifact"), path: virtualPath }),
  z.object({ type: z.literal("openImage"), path: virtualPath }),
  z.object({ type: z.literal("clearViewedImages") }),
  z.object({ type: z.literal("selectModel"), name: z.string().min(1).max(200) }),
  z.object({ type: z.literal("setPlanMode"), enabled: z.boolean() }),
  z.object({ type: z.literal("requestImage"), sha256: z.string().regex(/^[0-9a-f]{64}$/) }),
  z.object({ type: z.literal("openMemory") }),
  z.object({ type: z.literal("setSkillEnabled"), name: z.string().min(1).max(200), enabled: z.boolean() }),
  z.object({ type: z.literal("openSkill"), name: z.string().min(1).max(200) }),
  z.object({ type: z.literal("refreshSkills") }),
  z.object({ type: z.literal("addSkill") }),
  z.object({ type: z.literal("addMcpServer") }),
  z.object({ type: z.literal("refreshMcp") }),
  z.object({ type: z.literal("approveMcp"), server: z.string().min(1).max(200) }),
  z.object({ type: z.literal("showMcpLog"), server: z.string().min(1).max(200) }),
  z.object({ type: z.literal("retry") }),
  z.object({ type: z.literal("showLogs") }),
  z.object({ type: z.literal("setApiKey"), model: z.string().min(1).max(200) }),
  z.object({ type: z.literal("addModel") }),
  z.object({ type: z.literal("useVsCodeModels") }),
  ...REVIEW_MESSAGE_SCHEMAS,
]);

type Parsed = z.infer<typeof WebviewToHostZ>;
// Both directions must hold: every protocol message has a schema, every schema a protocol message.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const _schemaMatchesProtocol: Same<Parsed["type"], WebviewToHost["type"]> = true;
void _schemaMatchesProtocol;

export function parseWebviewMessage(raw: unknown): { ok: true; message: WebviewToHost } | { ok: false; error: string } {
  const parsed = WebviewToHostZ.safeParse(raw);
  if (parsed.success) return { ok: true, message: parsed.data };
  const type = typeof raw === "object" && raw !== null && "type" in raw ? String(raw.type) : "(no type)";
  return { ok: false, error: `Ignored a malformed panel message "${type}": ${parsed.error.issues.map((i) => `${i.path.join(".") || "message"} ${i.message}`).join("; ")}` };
}
