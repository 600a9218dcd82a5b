/**
 * API keys in VS Code's SecretStorage, under the name a model's `api_key_env` gives them.
 *
 * A key leaves this module only as part of `harness/configure`'s `apiKeys` (the harness keeps it
 * in memory). It is never logged, never posted to the webview, never put in globalState or
 * settings. The names are not secret; they are what the QuickPick offers.
 */
import type * as vscode from "vscode";

const PREFIX = "deerflow.apiKey.";
/** The names that have a stored key (SecretStorage cannot list its keys). Names only, never values. */
const NAMES_KEY = "deerflow.apiKeyNames";
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export class ApiKeys {
  /** Keys removed in this session: the harness merges `apiKeys`, so a removal is sent as "". */
  private readonly forgotten = new Set<string>();
  constructor(
    private readonly storage: vscode.SecretStorage,
    private readonly names: vscode.Memento,
  ) {}

  static isValidName(name: string): boolean {
    return NAME.test(name);
  }

  /** Fires with the name (never the value) when a key is set or deleted, from any window. */
  onDidChange(listener: (name: string) => void): vscode.Disposable {
    return this.storage.onDidChange((e) => {
      if (e.key.startsWith(PREFIX)) listener(e.key.slice(PREFIX.length));
    });
  }

  async set(name: string, value: string): Promise<void> {
    if (!ApiKeys.isValidName(name)) throw new Error(`"${name}" is not a valid key name (letters, digits and _).`);
    const known = new Set(this.names.get<string[]>(NAMES_KEY, []));
    if (value === "") {
      await this.storage.delete(PREFIX + name);
      known.delete(name);
      this.forgotten.add(name);
    } else {
      this.forgotten.delete(name);
      await this.storage.store(PREFIX + name, value);
      known.add(name);
    }
    await this.names.update(NAMES_KEY, [...known].sort());
  }

  async has(name: string): Promise<boolean> {
    return (await this.storage.get(PREFIX + name)) !== undefined;
  }

  /** The names a key was set under, as offered by the picker. */
  storedNames(): string[] {
    return this.names.get<string[]>(NAMES_KEY, []);
  }

  /** Every stored key (the models' names and any other set), for `harness/configure` only. */
  async collect(names: readonly string[]): Promise<Record<string, string>> {
    const keys: Record<string, string> = {};
    for (const name of this.forgotten) keys[name] = "";
    for (const name of new Set([...names, ...this.storedNames()])) {
      const value = await this.storage.get(PREFIX + name);
      if (value !== undefined) keys[name] = value;
    }
    return keys;
  }
}
