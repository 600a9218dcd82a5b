/**
 * ViewImageMiddleware (DeerFlow `view_image_middleware.py`): after `view_image` calls complete,
 * the next model request carries the viewed images as a user message of text + `image_url`
 * blocks, built from the bytes in the blob store (state keeps only `{mime_type, size, sha256}`).
 *
 * Where we differ, on purpose: DeerFlow writes the message into state in `before_model` and
 * removes it with `RemoveMessage` in `after_model`. Every hook write is checkpointed, so the
 * base64 would still sit in the checkpoint history (and our `writes` table) even after the
 * removal. Here the message is added in `wrapModelCall` to the request only: no checkpoint, no
 * `messages` stream event, no later request ever carries it. The condition is DeerFlow's: the
 * last AI message has a `view_image` call and all of its calls have results — which is true for
 * exactly the one model request that follows those results (a retry of that same request by an
 * outer wrapper re-injects, as it should).
 *
 * Installed only for vision models (the chain checks `supportsVision`); `viewed_images` keeps
 * its reducer semantics (`{}` clears), and this middleware never writes it.
 */
import { createMiddleware } from "langchain";
import { AIMessage, HumanMessage, ToolMessage } from "@langchain/core/messages";
import type { BaseMessage } from "@langchain/core/messages";
import { StateSchema } from "@langchain/langgraph";
import { randomUUID } from "node:crypto";
import type { BlobStore } from "../store/blobs.js";
import type { ViewedImage } from "../state/reducers.js";
import { threadStateFields } from "../state/threadState.js";
import { MAX_IMAGE_BYTES } from "../tools/imageFormat.js";

export const IMAGE_CONTEXT_ID_PREFIX = "view-image-context:";
export const IMAGE_CONTEXT_MARKER_KEY = "deerflow_view_image_context";

type Block = { type: "text"; text: string } | { type: "image_url"; image_url: { url: string } };

const viewImageState = new StateSchema({ viewed_images: threadStateFields.viewed_images });

/** DeerFlow `_create_image_details_message`, reading bytes from the blob store instead of disk. */
export function imageDetailBlocks(viewed: Readonly<Record<string, ViewedImage>>, blobs: BlobStore): Block[] {
  const entries = Object.entries(viewed);
  if (entries.length === 0) return [{ type: "text", text: "No images have been viewed." }];
  const blocks: Block[] = [{ type: "text", text: "Here are the images you've viewed:" }];
  for (const [path, image] of entries) {
    const mime = image.mime_type || "unknown";
    blocks.push({ type: "text", text: `\n- **${path}** (${mime})` });
    const blob = image.sha256 ? blobs.get(image.sha256) : undefined;
    // DeerFlow skips the image when the file changed size or grew past the cap; the blob is
    // content-addressed, so only a missing row or a size mismatch can happen here.
    if (blob && blob.size === image.size && blob.bytes.length <= MAX_IMAGE_BYTES) {
      blocks.push({ type: "image_url", image_url: { url: `data:${image.mime_type};base64,${blob.bytes.toString("base64")}` } });
    } else {
      blocks.push({ type: "text", text: `  (file unavailable or changed on disk: ${path})` });
    }
  }
  return blocks;
}

/** DeerFlow `_should_inject_image_message`, minus the "already injected" check (never in state here). */
export function shouldInjectImages(messages: readonly BaseMessage[]): boolean {
  let idx = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (AIMessage.isInstance(messages[i])) {
      idx = i;
      break;
    }
  }
  if (idx < 0) return false;
  const ai = messages[idx] as AIMessage;
  const calls = ai.tool_calls ?? [];
  if (!calls.some((c) => c.name === "view_image")) return false;
  const answered = new Set(messages.slice(idx + 1).filter((m) => ToolMessage.isInstance(m)).map((m) => (m as ToolMessage).tool_call_id));
  return calls.every((c) => !c.id || answered.has(c.id));
}

export function imageContextMessage(blocks: Block[]): HumanMessage {
  return new HumanMessage({
    id: `${IMAGE_CONTEXT_ID_PREFIX}${randomUUID().replace(/-/g, "")}`,
    content: blocks,
    additional_kwargs: { hide_from_ui: true, [IMAGE_CONTEXT_MARKER_KEY]: true },
  });
}

export function viewImageMiddleware(blobs: BlobStore) {
  return createMiddleware({
    name: "ViewImageMiddleware",
    stateSchema: viewImageState,
    wrapModelCall: (request, handler) => {
      if (!shouldInjectImages(request.messages)) return handler(request);
      const viewed = (request.state as { viewed_images?: Record<string, ViewedImage> | null }).viewed_images ?? {};
      const message = imageContextMessage(imageDetailBlocks(viewed, blobs));
      return handler({ ...request, messages: [...request.messages, message] });
    },
  });
}
