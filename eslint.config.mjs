// Lint: typescript-eslint with type information. Two boundaries are enforced here, not by convention:
// the harness never imports `vscode` (it runs headless), and the webview imports only the protocol types.
// Import cycles are the lint script's second step: dependency-cruiser with .dependency-cruiser.mjs
// (import-x's no-cycle would skip type-only imports; that file says why they count).
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  // samples/ are the user's-project fixtures the agent works on, not our code.
  { ignores: ["dist/**", ".prof/**", "node_modules/**", "out/**", ".vscode-test/**", "samples/**", "**/*.mjs"] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // node:test's test()/describe() return promises the runner itself tracks.
      "@typescript-eslint/no-floating-promises": ["error", {
        allowForKnownSafeCalls: [{ from: "package", package: "node:test", name: ["test", "it", "describe", "suite", "before", "after", "beforeEach", "afterEach"] }],
      }],
      "@typescript-eslint/no-misused-promises": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
    },
  },
  {
    files: ["extension/harness/**/*.ts", "extension/protocol/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "vscode", message: "The harness runs headless: it must never import vscode." }],
        patterns: [{ group: ["**/host/**", "**/webview/**"], message: "The harness must not depend on the host or the webview." }],
      }],
      "no-console": ["error"],
    },
  },
  {
    files: ["webview/**/*.ts"],
    rules: {
      "no-restricted-imports": ["error", {
        paths: [{ name: "vscode", message: "The webview cannot import vscode." }],
        patterns: [{ group: ["**/harness/**", "**/host/**"], message: "The webview imports only extension/protocol." }],
      }],
    },
  },
  {
    // Tests and developer scripts parse JSON Lines and protocol payloads loosely on purpose.
    files: ["test/**/*.ts", "scripts/**/*.ts"],
    rules: {
      "@typescript-eslint/no-unsafe-assignment": "off",
      "@typescript-eslint/no-unsafe-member-access": "off",
      "@typescript-eslint/no-unsafe-call": "off",
      "@typescript-eslint/no-unsafe-argument": "off",
      "@typescript-eslint/no-unsafe-return": "off",
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
    },
  },
);
