/** The harness's version: package.json's, bundled into dist/ at build time (so a VSIX or an installed copy says its own). */
import pkg from "../../package.json" with { type: "json" };

export const HARNESS_VERSION: string = pkg.version;
