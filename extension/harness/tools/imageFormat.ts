/**
 * Image type detection by content (magic bytes), as DeerFlow's view_image does: the extension
 * alone is never trusted.
 */
export type ImageMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp";

export const EXTENSION_MIME: Readonly<Record<string, ImageMime>> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
};

export const SUPPORTED_EXTENSIONS = Object.keys(EXTENSION_MIME);

/** DeerFlow's cap: 20 MiB. */
export const MAX_IMAGE_BYTES = 20 * 1024 * 1024;

export function sniffImageMime(bytes: Uint8Array): ImageMime | undefined {
  const b = (i: number) => bytes[i];
  if (bytes.length >= 8 && b(0) === 0x89 && b(1) === 0x50 && b(2) === 0x4e && b(3) === 0x47 && b(4) === 0x0d && b(5) === 0x0a && b(6) === 0x1a && b(7) === 0x0a) {
    return "image/png";
  }
  if (bytes.length >= 3 && b(0) === 0xff && b(1) === 0xd8 && b(2) === 0xff) return "image/jpeg";
  if (bytes.length >= 6) {
    const head = Buffer.from(bytes.subarray(0, 6)).toString("latin1");
    if (head === "GIF87a" || head === "GIF89a") return "image/gif";
  }
  if (bytes.length >= 12) {
    const riff = Buffer.from(bytes.subarray(0, 4)).toString("latin1");
    const webp = Buffer.from(bytes.subarray(8, 12)).toString("latin1");
    if (riff === "RIFF" && webp === "WEBP") return "image/webp";
  }
  return undefined;
}
