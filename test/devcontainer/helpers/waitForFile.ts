import { existsSync, watch } from "node:fs";
import { join } from "node:path";

/** Resolves when `name` exists in `dir`: on the directory's change event, not by polling. */
export function waitForFile(dir: string, name: string): Promise<void> {
  return new Promise((resolve) => {
    const watcher = watch(dir, () => {
      if (existsSync(join(dir, name))) {
        watcher.close();
        resolve();
      }
    });
    // It may have appeared before the watcher was in place.
    if (existsSync(join(dir, name))) {
      watcher.close();
      resolve();
    }
  });
}
