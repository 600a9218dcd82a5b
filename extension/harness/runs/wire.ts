/**
 * LangChain messages → the wire shapes of `extension/protocol/events.ts`.
 * The harness serialises here once, so the CLI, the journal and the panel see the same JSON.
 */
import { AIMessage, AIMessageChunk, BaseMessage, ToolMessage } from "@langchain/core/messages";
import type { WireContentBlock, WireMessage, WireMessageChunk } from "../../protocol/events.js";

function typeOf(m: BaseMessage): WireMessage["type"] {
  const t: string = m.getType();
  switch (t) {
    case "human":
    case "ai":
    case "tool":
    case "system":
    case "remove":
      return t;
    default:
      return "human";
  }
}

function wireContent(content: BaseMessage["content"]): string | WireContentBlock[] {
  if (typeof content === "string") return content;
  return content.map((b) => b as WireContentBlock);
}

export function toWireMessage(m: BaseMessage): WireMessage {
  const out: WireMessage = { type: typeOf(m), content: wireContent(m.content) };
  if (m.id) out.id = m.id;
  if (m.name) out.name = m.name;
  if (AIMessage.isInstance(m)) {
    if (m.tool_calls && m.tool_calls.length > 0) {
      out.tool_calls = m.tool_calls.map((c) => ({ id: c.id ?? "", name: c.name, args: c.args }));
    }
    if (m.usage_metadata) {
      const { input_tokens, output_tokens, total_tokens } = m.usage_metadata;
      out.usage_metadata = { input_tokens, output_tokens, total_tokens };
    }
  }
  if (ToolMessage.isInstance(m)) {
    out.tool_call_id = m.tool_call_id;
    if (m.status) out.status = m.status;
  }
  const kwargs = { ...m.additional_kwargs };
  // Provider-raw duplicates of fields already above: noise for every consumer.
  delete kwargs.tool_calls;
  delete kwargs.function_call;
  if (Object.keys(kwargs).length > 0) out.additional_kwargs = kwargs;
  return out;
}

export function toWireChunk(m: BaseMessage, node: string | undefined): WireMessageChunk {
  const content = typeof m.content === "string" ? m.content : m.content.map((b) => (b.type === "text" && "text" in b ? String(b.text) : "")).join("");
  const out: WireMessageChunk = { type: typeOf(m), id: m.id ?? "", content };
  if (node) out.node = node;
  if (m.name) out.name = m.name;
  if (AIMessageChunk.isInstance(m) && m.tool_call_chunks && m.tool_call_chunks.length > 0) {
    out.tool_call_chunks = m.tool_call_chunks.map((c) => ({
      ...(c.index !== undefined ? { index: c.index } : {}),
      ...(c.id ? { id: c.id } : {}),
      ...(c.name ? { name: c.name } : {}),
      ...(c.args ? { args: c.args } : {}),
    }));
  }
  if (ToolMessage.isInstance(m)) out.tool_call_id = m.tool_call_id;
  return out;
}

/** Recursively replace LangChain messages inside a stream payload by their wire form. */
export function wireValue(v: unknown): unknown {
  if (v instanceof BaseMessage) return toWireMessage(v);
  if (Array.isArray(v)) return v.map(wireValue);
  if (v && typeof v === "object") {
    const proto = Object.getPrototypeOf(v) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      // Commands, Sends and other class instances: keep their plain fields only.
      return JSON.parse(JSON.stringify(v)) as unknown;
    }
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, wireValue(x)]));
  }
  return v;
}
