/**
 * Per-path async mutex (DeerFlow's file_operation_lock.py). Keyed by the *real* host path, not
 * by sandbox: two threads share one workspace folder, so two sandboxes can edit the same file.
 * Entries are dropped once nobody waits, so the map does not grow with every path ever touched.
 */
const tails = new Map<string, Promise<void>>();

export async function withPathLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  let release!: () => void;
  const current = new Promise<void>((r) => (release = r));
  const tail = previous.then(() => current);
  tails.set(key, tail);
  await previous;
  try {
    return await fn();
  } finally {
    release();
    if (tails.get(key) === tail) tails.delete(key);
  }
}

/** For tests: how many paths currently hold or wait for a lock. */
export function activePathLocks(): number {
  return tails.size;
}
