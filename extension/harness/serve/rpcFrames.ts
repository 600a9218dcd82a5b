/**
 * `/rpc`'s frames as JSON-RPC 2.0 says a server answers them (issue 32 item 6): a frame that is
 * not JSON gets -32700 (Parse error), JSON that is not a request, notification or response gets
 * -32600 (Invalid Request), both with `id` null unless the message carried a usable one.
 * vscode-jsonrpc drops such frames silently (a log line, no answer), so a client never learns
 * why nothing came back. Everything else goes to the connection unchanged.
 */
import type { Disposable, Message, MessageReader, MessageWriter, DataCallback, PartialMessageInfo } from "vscode-languageserver/node.js";
import type { Event } from "vscode-languageserver/node.js";

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A request or notification (a method), or a response (an id with a result or an error). */
export function isJsonRpcMessage(m: unknown): boolean {
  if (!isRecord(m) || m.jsonrpc !== "2.0") return false;
  const idOk = m.id === undefined || m.id === null || typeof m.id === "string" || typeof m.id === "number";
  if (typeof m.method === "string") return idOk && (m.params === undefined || typeof m.params === "object");
  return idOk && m.id !== undefined && ("result" in m || isRecord(m.error));
}

function idOf(m: unknown): string | number | null {
  return isRecord(m) && (typeof m.id === "string" || typeof m.id === "number") ? m.id : null;
}

export class ValidatingReader implements MessageReader {
  readonly onError: Event<Error>;
  readonly onClose: Event<void>;
  readonly onPartialMessage: Event<PartialMessageInfo>;
  private readonly parseErrors: Disposable;

  constructor(private readonly inner: MessageReader, private readonly writer: MessageWriter) {
    this.onError = inner.onError;
    this.onClose = inner.onClose;
    this.onPartialMessage = inner.onPartialMessage;
    this.parseErrors = inner.onError((err) => {
      if (err instanceof SyntaxError) this.answer(null, -32700, "Parse error: the frame is not JSON.");
    });
  }

  listen(callback: DataCallback): Disposable {
    return this.inner.listen((message: Message) => {
      if (isJsonRpcMessage(message)) callback(message);
      else this.answer(idOf(message), -32600, 'Invalid Request: a JSON-RPC 2.0 message has "jsonrpc": "2.0" and a method (or, as a response, an id with a result or an error).');
    });
  }

  private answer(id: string | number | null, code: number, message: string): void {
    void this.writer.write({ jsonrpc: "2.0", id, error: { code, message } } as Message).catch(() => undefined);
  }

  dispose(): void {
    this.parseErrors.dispose();
    this.inner.dispose();
  }
}
