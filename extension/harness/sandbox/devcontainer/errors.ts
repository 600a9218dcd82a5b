/** Promise rejections carry Errors; an abort reason or a caught value may be anything. */
export function asError(reason: unknown): Error {
  return reason instanceof Error ? reason : new Error(String(reason));
}
