/**
 * The limits of a decision on paused tool calls (issue 21 item 7), in ONE place for the three
 * worlds that check them: the panel (the reason box), the host (the webview's `decide` message),
 * the harness (`runs/decide`, `deerflow approve`, and the approval middleware, which never lets
 * a paused turn exceed what a decision may carry, so no thread waits on a decision nobody can
 * send). The one module of extension/protocol with values, not only types: the webview may
 * import nothing else, and a type cannot carry a number at runtime. No imports, no logic.
 */
export const DECISION_LIMITS = {
  /** Calls one paused turn may wait on, so decisions one `decide` carries. */
  maxPending: 100,
  /** Characters of a tool-call id a decision names; the harness renames longer ids before any card. */
  maxIdChars: 200,
  /** Characters of a rejection reason (the model reads it). */
  maxReasonChars: 2000,
} as const;
