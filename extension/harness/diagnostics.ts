/**
 * The harness's process-wide diagnostics line, for code far from any logger (a middleware, the
 * token counter). The CLI writes these lines to stderr (stdout carries its JSON Lines); the
 * harness server points them at its logger, which the host routes to "DeerFlow: Show Logs"
 * (server.ts calls `setDiagnostics`). Never pass prompts, message text or secrets here.
 */
export interface DiagnosticsSink {
  info(message: string): void;
  warn(message: string): void;
}

const stderrSink: DiagnosticsSink = {
  info: (m) => void process.stderr.write(`deerflow: ${m}\n`),
  warn: (m) => void process.stderr.write(`deerflow: warning: ${m}\n`),
};

let sink: DiagnosticsSink = stderrSink;

export function setDiagnostics(next: DiagnosticsSink): void {
  sink = next;
}

export const diagnostics: DiagnosticsSink = {
  info: (m) => sink.info(m),
  warn: (m) => sink.warn(m),
};
