/**
 * The panel's page: a strict CSP with a fresh nonce per load, and only the bundle's own files
 * (dist/webview.js, dist/webview.css, dist/codicons/) through asWebviewUri.
 *
 * - script-src: the nonce only; no eval, no inline handlers.
 * - style-src: the bundle's css (webview.cspSource) and nonce'd <style>; Lit's
 *   adoptedStyleSheets are not subject to it. No 'unsafe-inline'.
 * - img-src: the bundle and data: (thumbnails arrive as data URLs from images/get).
 * - font-src: the codicon font; connect-src: none (everything goes through postMessage).
 *
 * The codicon <link> carries id="vscode-codicon-stylesheet": @vscode-elements' <vscode-icon>
 * looks it up to load the font inside its shadow root.
 */
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";

export function panelHtml(webview: vscode.Webview, extensionUri: vscode.Uri): string {
  const nonce = randomBytes(18).toString("base64");
  const asset = (...p: string[]): string => webview.asWebviewUri(vscode.Uri.joinPath(extensionUri, "dist", ...p)).toString();
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src ${webview.cspSource} 'nonce-${nonce}'`,
    `img-src ${webview.cspSource} data:`,
    `font-src ${webview.cspSource}`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${asset("codicons", "codicon.css")}" id="vscode-codicon-stylesheet">
<link rel="stylesheet" href="${asset("webview.css")}">
<title>DeerFlow</title>
</head>
<body>
<div id="app" data-nonce="${nonce}"></div>
<script type="module" nonce="${nonce}" src="${asset("webview.js")}"></script>
</body>
</html>`;
}

/** Only the bundle and the activity-bar icon are loadable; never the workspace or the disk. */
export function localResourceRoots(extensionUri: vscode.Uri): vscode.Uri[] {
  return [vscode.Uri.joinPath(extensionUri, "dist"), vscode.Uri.joinPath(extensionUri, "media")];
}
