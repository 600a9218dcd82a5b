/**
 * Entry for `extensionTestsPath`: the extension host `require`s this file and calls run(), the
 * same contract @vscode/test-electron uses. Runs inside code-server's (Node) extension host;
 * scripts/run-vscode-tests.ts opens the workbench with the payload that points here.
 */
import { join } from "node:path";
import Mocha from "mocha";

/**
 * In this order: the command and run tests use the environment's model (or configure their own,
 * scriptedModel.ts) before the settings test, which expects the default settings, adds models.
 */
const FILES = ["activation.test.js", "commands.test.js", "run.test.js", "secrets.test.js", "settings.test.js", "approvalSettings.test.js", "modelSettings.test.js", "remoteHarness.test.js", "restart.test.js"];

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: "bdd", color: false, timeout: 30_000 });
  for (const f of FILES) mocha.addFile(join(__dirname, f));
  return new Promise((resolve, reject) => {
    mocha.run((failures) => {
      // The closing line a driver reads, with or without the exit code.
      console.log(`${mocha.suite.total() - failures} passed, ${failures} failed`);
      if (failures > 0) reject(new Error(`${failures} tests failed.`));
      else resolve();
    });
  });
}
