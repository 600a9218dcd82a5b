/**
 * The harness database: one SQLite file per workspace folder, opened with the driver
 * `sqlite/open.ts` chooses for this runtime (better-sqlite3 or node:sqlite).
 *
 * Why a file per folder: a workspace's threads, runs and checkpoints travel together and are
 * deleted together, and two VS Code windows on different folders never contend for one lock.
 * Why outside the workspace: the sandbox can read and write the workspace; it must not be able to
 * read or forge run state (ARCHITECTURE.md, "Thread data on workspace folders").
 */
import { createHash } from "node:crypto";
import { mkdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve, sep } from "node:path";
import { HarnessError, errorMessage } from "../errors.js";
import { migrations, type Migration } from "./migrations/index.js";
import { createBlobStore, type BlobStore } from "./blobs.js";
import { LinearSqliteSaver } from "./checkpointer.js";
import { createThreadStore, type ThreadStore } from "./threads.js";
import { createFileChangeStore, type FileChangeStore } from "./fileChanges.js";
import { storageDriver } from "./sqlite/open.js";
import type { Db } from "./sqlite/types.js";
import { PostgresDb } from "./postgres/syncPg.js";
import { isPostgresUrl, redactUrl } from "./postgres/url.js";
import { migratePostgres } from "./postgres/migrate.js";
import { postgresMigrations } from "./postgres/migrations.js";

/** How long a writer waits for another connection's write lock before SQLITE_BUSY. */
const BUSY_TIMEOUT_MS = 5000;

/**
 * Opens (creating if needed) a database file and brings its schema up to date.
 * `:memory:` works too (tests), but WAL then silently stays "memory".
 */
export function openDatabase(file: string, options: { migrations?: readonly Migration[]; ledger?: string } = {}): Db {
  // `ledger`: Postgres only, the table that versions `migrations` (postgres/migrate.ts).
  if (isPostgresUrl(file)) return openPostgres(file, options.migrations ?? postgresMigrations, options.ledger);
  // No driver for this runtime: storageDriver() throws "storage_unavailable" with what to do.
  const driver = storageDriver();
  let db: Db;
  try {
    db = driver.open(file);
  } catch (err) {
    throw new HarnessError("storage", `Cannot open the harness database ${file}: ${errorMessage(err)}`, { cause: err });
  }
  try {
    // Set on every connection, with either driver (the CLI and the panel's harness may use
    // different ones on one file). busy_timeout first: switching to WAL needs the lock.
    db.exec(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`);
    // WAL: readers (the panel replaying events) never block the writer (the run worker).
    db.exec("PRAGMA journal_mode = WAL");
    // NORMAL is durable across application crashes in WAL mode; only an OS crash can lose the
    // last commits, which a checkpoint-resumable run tolerates.
    db.exec("PRAGMA synchronous = NORMAL");
    db.exec("PRAGMA foreign_keys = ON");
    // Deleted content is zeroed, in its page and in pages it frees, instead of lingering in the
    // file until reused: a deleted thread (deleteThread.ts) must not stay readable with
    // `strings harness.db`, and neither must a run row's earlier versions, a finished run's index
    // entries or checkpoint rows replaced or dropped. The cost is writing each freed page
    // once (a few per run); FAST would skip exactly those pages.
    db.exec("PRAGMA secure_delete = ON");
    migrate(db, options.migrations ?? migrations);
    return db;
  } catch (err) {
    db.close();
    if (err instanceof HarnessError) throw err;
    throw new HarnessError("storage", `Cannot prepare the harness database ${file}: ${errorMessage(err)}`, { cause: err });
  }
}

/**
 * A Postgres database (`postgres://…`, issue 26): the synchronous driver (postgres/syncPg.ts)
 * and Postgres' own schema list. The URL's credentials never reach an error message.
 */
function openPostgres(url: string, list: readonly Migration[], ledger?: string): Db {
  const db = PostgresDb.open(url);
  try {
    migratePostgres(db, list, ledger ? { ledger } : {});
    return db;
  } catch (err) {
    db.close();
    if (err instanceof HarnessError) throw err;
    throw new HarnessError("storage", `Cannot prepare the Postgres database ${redactUrl(url)}: ${redactUrl(errorMessage(err))}`, { cause: err });
  }
}

/**
 * Applies the migrations the file has not seen yet. `PRAGMA user_version` is the source of truth
 * (it is atomic with the transaction); `schema_migrations` is a human-readable audit of when each
 * ran. A file from a newer build (user_version beyond what we know) is refused rather than
 * silently misread.
 */
export function migrate(db: Db, list: readonly Migration[]): void {
  if (db.dialect === "postgres") return migratePostgres(db, list);
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
  version    INTEGER PRIMARY KEY,
  name       TEXT NOT NULL,
  applied_at INTEGER NOT NULL
)`);
  const current = Number(db.pragma("user_version"));
  if (current > list.length) {
    throw new HarnessError(
      "storage",
      `The harness database has schema version ${current}, newer than this build knows (${list.length}). Update the extension.`,
    );
  }
  const record = db.prepare("INSERT OR REPLACE INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)");
  for (let i = current; i < list.length; i++) {
    const m = list[i]!;
    const version = i + 1;
    // IMMEDIATE: two processes opening the same fresh file must not both apply migration 1.
    db.transaction("immediate", () => {
      // Re-read inside the lock: the other process may have migrated while we waited.
      if (Number(db.pragma("user_version")) >= version) return;
      db.exec(m.sql);
      record.run(version, m.name, Date.now());
      db.exec(`PRAGMA user_version = ${version}`);
    });
  }
}

/**
 * The default per-user data directory of the harness (never inside a workspace):
 * Linux `$XDG_DATA_HOME/deerflow` or `~/.local/share/deerflow`; macOS
 * `~/Library/Application Support/deerflow`; Windows `%LOCALAPPDATA%\deerflow`.
 * The extension passes its `globalStorageUri` instead; the CLI takes `--data-dir`.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  const home = env.HOME || env.USERPROFILE || homedir();
  if (platform === "win32") return join(env.LOCALAPPDATA || join(home, "AppData", "Local"), "deerflow");
  if (platform === "darwin") return join(home, "Library", "Application Support", "deerflow");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "deerflow");
}

/** Alias of {@link defaultDataDir}. */
export const dataDir = defaultDataDir;

/**
 * Where a folder's database lives: `<dataDir>/workspaces/<key>/harness.db`, key = first 16 hex of
 * sha256(realpath(folder)). realpath so a symlinked or differently-cased path opens the same file.
 */
export function workspaceDbPath(dataDirectory: string, workspaceFolder: string): { dir: string; file: string; folder: string } {
  let folder: string;
  try {
    folder = realpathSync(workspaceFolder);
  } catch (err) {
    throw new HarnessError("storage", `Workspace folder ${workspaceFolder} is not accessible: ${errorMessage(err)}`, { cause: err });
  }
  const key = createHash("sha256").update(folder).digest("hex").slice(0, 16);
  const dir = join(dataDirectory, "workspaces", key);
  return { dir, file: join(dir, "harness.db"), folder };
}

export interface WorkspaceStore {
  readonly db: Db;
  /** The data directory it lives in (the user's: their memory database is there too, memory/queue.ts). */
  readonly dataDir: string;
  /** realpath of the workspace folder */
  readonly workspaceFolder: string;
  readonly file: string;
  /** threads of this folder */
  readonly threads: ThreadStore;
  readonly blobs: BlobStore;
  /** What runs changed through the file tools, with the before-content (changes/). */
  readonly fileChanges: FileChangeStore;
  readonly checkpointer: LinearSqliteSaver;
  close(): void;
}

/**
 * Opens the database of one workspace folder, creating the directory and schema as needed.
 * `database`: a Postgres URL (the `database` config section, `--database`): the folder's rows
 * live there, beside every other folder's, instead of in the folder's own SQLite file. The data
 * directory is still the user's (the memory database stays there).
 */
export function openWorkspaceStore(opts: { dataDir: string; workspaceFolder: string; database?: string }): WorkspaceStore {
  const { dir, file: sqliteFile, folder } = workspaceDbPath(opts.dataDir, opts.workspaceFolder);
  // The sandbox can read and write the workspace: run state there could be read or forged.
  // Checked on the given path (before creating anything) and on the real one (symlinks).
  const inside = (p: string) => p === folder || p.startsWith(folder.endsWith(sep) ? folder : folder + sep);
  const refuse = () =>
    new HarnessError("storage", `The data directory ${opts.dataDir} is inside the workspace ${folder}; choose one outside it.`);
  if (inside(resolve(dir))) throw refuse();
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (inside(realpathSync(dir))) throw refuse();
  const postgres = opts.database !== undefined && isPostgresUrl(opts.database);
  const db = openDatabase(postgres ? opts.database! : sqliteFile);
  const file = postgres ? db.file : sqliteFile;
  const blobs = createBlobStore(db);
  return {
    db,
    dataDir: opts.dataDir,
    workspaceFolder: folder,
    file,
    threads: createThreadStore(db, { workspaceFolder: folder }),
    blobs,
    fileChanges: createFileChangeStore(db, blobs),
    checkpointer: new LinearSqliteSaver(db),
    close: () => db.close(),
  };
}
