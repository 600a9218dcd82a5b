/**
 * Output capture with a byte cap, shared by host exec and container exec: keeps the first
 * `limit` bytes, counts the rest, and says how much was discarded (DeerFlow caps capture at 10 MB
 * before its own character truncation).
 */
export class BoundedCapture {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  private total = 0;
  constructor(private readonly limit: number) {}

  append(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.kept >= this.limit) return;
    const part = chunk.subarray(0, this.limit - this.kept);
    this.chunks.push(part);
    this.kept += part.length;
  }

  text(): string {
    const out = Buffer.concat(this.chunks).toString("utf8");
    if (this.total <= this.kept) return out;
    return `${out}\n... [output truncated after ${this.kept} of ${this.total} bytes; remaining output discarded] ...`;
  }
}
