// ViewImageMiddleware through the real agent graph (agent/graph/build.ts) with the real view_image tool and blob store:
// the request right after view_image carries the images, no other request does, and no
// checkpoint or streamed message ever holds the base64.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { HumanMessage } from "@langchain/core/messages";
import { startModelServer } from "../../fixtures/modelServer.js";
import type { ModelServer, RecordedRequest } from "../../fixtures/modelServer.js";
import { viewImageTool } from "../../../extension/harness/tools/viewImage.js";
import { imageContextMessage, imageDetailBlocks, shouldInjectImages, viewImageMiddleware } from "../../../extension/harness/middlewares/viewImage.js";
import { AIMessage, ToolMessage } from "@langchain/core/messages";
import { buildTestAgent, nonSystem, PNG, PNG_B64, threadFixture } from "./helpers.js";

let server: ModelServer;
before(async () => {
  server = await startModelServer();
});
after(async () => {
  await server.close();
});

const GIF = Buffer.from("R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7", "base64");

function imageMessages(req: RecordedRequest) {
  return nonSystem(req.body!.messages).filter((m) => Array.isArray(m.content) && m.content.some((b) => b.type === "image_url"));
}

test("blocks: none viewed → one text block; one PNG → header, path+mime, data URL; unavailable bytes → a note, no image", () => {
  const { blobs } = threadFixture();
  assert.deepEqual(imageDetailBlocks({}, blobs), [{ type: "text", text: "No images have been viewed." }]);
  const sha256 = blobs.put(PNG, "image/png");
  const one = imageDetailBlocks({ "/mnt/user-data/uploads/a.png": { mime_type: "image/png", size: PNG.length, sha256 } }, blobs);
  assert.deepEqual(one, [
    { type: "text", text: "Here are the images you've viewed:" },
    { type: "text", text: "\n- **/mnt/user-data/uploads/a.png** (image/png)" },
    { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_B64}` } },
  ]);
  const two = imageDetailBlocks(
    {
      "/mnt/user-data/uploads/a.png": { mime_type: "image/png", size: PNG.length, sha256 },
      "/mnt/user-data/uploads/b.gif": { mime_type: "image/gif", size: GIF.length, sha256: blobs.put(GIF, "image/gif") },
    },
    blobs,
  );
  assert.equal(two.length, 5);
  const missing = imageDetailBlocks({ "/x.png": { mime_type: "", size: 3, sha256: "0".repeat(64) } }, blobs);
  assert.equal(missing.filter((b) => b.type === "image_url").length, 0);
  assert.match((missing[1] as { text: string }).text, /\(unknown\)/);
  assert.match((missing[2] as { text: string }).text, /unavailable/);
  const changed = imageDetailBlocks({ "/a.png": { mime_type: "image/png", size: PNG.length + 1, sha256 } }, blobs);
  assert.equal(changed.filter((b) => b.type === "image_url").length, 0, "a size that does not match is not sent");
});

test("the injected message is marked model-only, as DeerFlow's (hidden from the UI, server marker, prefixed id)", () => {
  const m = imageContextMessage([{ type: "text", text: "No images have been viewed." }]);
  assert.match(m.id!, /^view-image-context:[0-9a-f]{32}$/);
  assert.equal(m.additional_kwargs.hide_from_ui, true);
  assert.equal(m.additional_kwargs.deerflow_view_image_context, true);
});

test("inject only when the last AI message called view_image and every one of its calls has a result", () => {
  const ai = new AIMessage({ content: "", tool_calls: [{ id: "a", name: "view_image", args: {} }, { id: "b", name: "ls", args: {} }] });
  const h = new HumanMessage("hi");
  assert.equal(shouldInjectImages([h]), false);
  assert.equal(shouldInjectImages([h, ai, new ToolMessage({ content: "ok", tool_call_id: "a" })]), false);
  assert.equal(shouldInjectImages([h, ai, new ToolMessage({ content: "ok", tool_call_id: "a" }), new ToolMessage({ content: "ok", tool_call_id: "b" })]), true);
  const other = new AIMessage({ content: "", tool_calls: [{ id: "c", name: "ls", args: {} }] });
  assert.equal(shouldInjectImages([h, ai, new ToolMessage({ content: "ok", tool_call_id: "a" }), new ToolMessage({ content: "ok", tool_call_id: "b" }), other, new ToolMessage({ content: "ok", tool_call_id: "c" })]), false);
});

test("the request after view_image carries the image; later requests and runs do not; nothing of it is checkpointed or streamed", async () => {
  const { dirs, blobs } = threadFixture();
  writeFileSync(join(dirs.uploads, "cat.png"), PNG);
  server.setScript([
    { toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/cat.png" } }] },
    // Another tool round, so the run makes a third model request.
    { toolCalls: [{ name: "unknown_tool", args: {} }] },
    { content: "A cat." },
    { content: "Still a cat." },
  ]);
  const first = server.requests.length;
  const agent = buildTestAgent({ baseURL: server.url, tools: [viewImageTool(dirs, blobs)], middleware: [viewImageMiddleware(blobs)] });
  const config = { configurable: { thread_id: "vi-1" } };
  const streamed: string[] = [];
  const stream = await agent.graph.stream({ messages: [new HumanMessage("what is in cat.png?")] }, { ...config, streamMode: ["messages", "values", "updates"] });
  for await (const item of stream) streamed.push(JSON.stringify(item));
  const reqs = server.requests.slice(first);
  assert.equal(reqs.length, 3);
  assert.equal(imageMessages(reqs[0]!).length, 0);
  const injected = imageMessages(reqs[1]!);
  assert.equal(injected.length, 1, "exactly one image message in the request after view_image");
  const last = nonSystem(reqs[1]!.body!.messages).at(-1)!;
  assert.equal(last, injected[0], "appended after the tool results");
  assert.deepEqual(last.content, [
    { type: "text", text: "Here are the images you've viewed:" },
    { type: "text", text: "\n- **/mnt/user-data/uploads/cat.png** (image/png)" },
    { type: "image_url", image_url: { url: `data:image/png;base64,${PNG_B64}` } },
  ]);
  assert.equal(imageMessages(reqs[2]!).length, 0, "the third request does not resend it");

  await agent.graph.invoke({ messages: [new HumanMessage("and now?")] }, config);
  assert.equal(imageMessages(server.requests.at(-1)!).length, 0, "the next run does not resend it");

  const snap = await agent.graph.getState(config);
  assert.deepEqual(Object.keys((snap.values).viewed_images), ["/mnt/user-data/uploads/cat.png"]);
  assert.ok(!(snap.values).messages.some((m: any) => String(m.id ?? "").startsWith("view-image-context:")));
  for await (const s of agent.graph.getStateHistory(config)) {
    assert.ok(!JSON.stringify(s.values).includes(PNG_B64), "no checkpoint holds the base64");
  }
  assert.ok(!streamed.join("").includes(PNG_B64), "no stream event carries the base64");
});

test("an {} update clears viewed_images; the next view_image sends only the new image", async () => {
  const { dirs, blobs } = threadFixture();
  writeFileSync(join(dirs.uploads, "a.png"), PNG);
  writeFileSync(join(dirs.uploads, "b.gif"), GIF);
  server.setScript([
    { toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/a.png" } }] },
    { content: "ok" },
    { toolCalls: [{ name: "view_image", args: { image_path: "/mnt/user-data/uploads/b.gif" } }] },
    { content: "ok" },
  ]);
  const agent = buildTestAgent({ baseURL: server.url, tools: [viewImageTool(dirs, blobs)], middleware: [viewImageMiddleware(blobs)] });
  const config = { configurable: { thread_id: "vi-2" } };
  await agent.graph.invoke({ messages: [new HumanMessage("look at a")] }, config);
  await agent.graph.updateState(config, { viewed_images: {} });
  assert.deepEqual((await agent.graph.getState(config)).values.viewed_images, {});
  const first = server.requests.length;
  await agent.graph.invoke({ messages: [new HumanMessage("look at b")] }, config);
  const injected = imageMessages(server.requests[first + 1]!);
  assert.equal(injected.length, 1);
  const urls = (injected[0]!.content as any[]).filter((b) => b.type === "image_url").map((b) => b.image_url.url);
  assert.deepEqual(urls, [`data:image/gif;base64,${GIF.toString("base64")}`]);
});
