/**
 * DeerFlow's `database` section (`database: {backend: sqlite|postgres, postgres_url: $DATABASE_URL}`)
 * and which database a process opens: `--database URL` first, then the section, else each
 * workspace folder's own SQLite file in the data dir (store/db.ts).
 *
 * DeerFlow's `memory` backend (nothing persisted) has no counterpart here: a run system that
 * must lose nothing cannot run on it. `sqlite_dir` is DeerFlow's folder for its SQLite file; here
 * that is the data dir (`--data-dir`), so a value is accepted and the data dir still decides.
 * `checkpoint_channel_mode`: only DeerFlow's default, `full`, is ported.
 */
import { z } from "zod";
import { HarnessError } from "../../errors.js";
import { isPostgresUrl, redactUrl } from "./url.js";

export const DatabaseConfigZ = z
  .strictObject({
    backend: z.enum(["sqlite", "postgres"]).default("sqlite"),
    postgres_url: z
      .string()
      .refine(isPostgresUrl, { message: "a postgres:// or postgresql:// URL (e.g. postgres_url: $DATABASE_URL)" })
      .optional(),
    sqlite_dir: z.string().optional(),
    checkpoint_channel_mode: z.literal("full").optional(),
  })
  .refine((d) => d.backend !== "postgres" || d.postgres_url !== undefined, {
    message: "backend: postgres needs postgres_url (e.g. postgres_url: $DATABASE_URL)",
    path: ["postgres_url"],
  });
export type DatabaseConfig = z.infer<typeof DatabaseConfigZ>;

export interface DatabaseChoice {
  backend: "sqlite" | "postgres";
  /** The Postgres URL (with its credentials: never log it, use `shown`). */
  url?: string;
  /** What an operator may see: "sqlite (the data dir)" or the URL without its password. */
  shown: string;
}

/** `--database` (a postgres URL, or `sqlite`) wins over the config's section. */
export function chooseDatabase(flag: string | undefined, config: DatabaseConfig | undefined): DatabaseChoice {
  if (flag !== undefined) {
    if (flag === "sqlite") return { backend: "sqlite", shown: "sqlite (the data dir)" };
    if (!isPostgresUrl(flag)) {
      throw new HarnessError("usage", `--database takes a postgres:// URL or "sqlite", not ${JSON.stringify(redactUrl(flag))}.`);
    }
    return { backend: "postgres", url: flag, shown: redactUrl(flag) };
  }
  if (config?.backend === "postgres" && config.postgres_url) {
    return { backend: "postgres", url: config.postgres_url, shown: redactUrl(config.postgres_url) };
  }
  return { backend: "sqlite", shown: "sqlite (the data dir)" };
}
