/**
 * The value of a setting the trust boundary depends on (`deerflow.models`,
 * `deerflow.sandboxProvider`, `deerflow.allowHostCommands`): the user's or the remote machine's
 * value, else the default. A workspace or folder value is ignored, whatever the setting's declared
 * scope: `.vscode/settings.json` is a file in the workspace, which the agent and the sandbox can
 * write, so it must not switch host commands on, pick the sandbox, or point a model (and its key)
 * at another endpoint. The `machine` scope in package.json says the same to VS Code; this holds
 * even when a declaration or an older VS Code does not.
 *
 * No `vscode` import: the shape is the part of `WorkspaceConfiguration.inspect()` it reads, so
 * unit tests can hold it.
 */
export interface InspectedSetting<T> {
  readonly defaultValue?: T;
  /** User settings, merged with the remote machine's settings when VS Code is remote. */
  readonly globalValue?: T;
  readonly workspaceValue?: T;
  readonly workspaceFolderValue?: T;
}

export function trustedSettingValue<T>(inspected: InspectedSetting<T> | undefined, fallback: T): T {
  return inspected?.globalValue ?? inspected?.defaultValue ?? fallback;
}
