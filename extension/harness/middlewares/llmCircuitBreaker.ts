/**
 * The LLM circuit breaker and concurrency cap of DeerFlow's LLMErrorHandlingMiddleware
 * (`llm_error_handling_middleware.py`, `_check_circuit` / `_record_failure` / `_record_success`,
 * `max_concurrent_calls`), used by llmErrorHandling.ts.
 *
 * - A model call whose retries are exhausted on a retriable failure (not burst-rate) counts one
 *   failure; `failure_threshold` (5) consecutive ones open the breaker for `recovery_timeout_sec`
 *   (60). While open, calls fail fast with DeerFlow's fixed message and reach no provider. After
 *   the cool-down one probe is let through (half-open): success closes it, failure re-opens it.
 *   Quota/auth/other non-retriable errors release the probe without counting (DeerFlow).
 * - `max_concurrent_calls` (0 = off, DeerFlow's default) caps simultaneous calls per endpoint.
 *
 * Keyed per endpoint (base URL + model id), process-wide, as DeerFlow's is per process. Where we
 * differ: the `deerflow` CLI is one process per run, so an in-memory breaker would never see a
 * second failure. The state is therefore also kept in `<data-dir>/llm-circuit.json` (read at each
 * check, replaced atomically on each change), which every CLI run and the long-lived harness of
 * that data directory share. A file, not the harness DB: it is operational state of the machine's
 * provider, not thread data, it needs no migration, and a lost or corrupt file only closes the
 * breaker (fail open). The open interval is computed from `opened_at` with the CURRENT cool-down,
 * so lowering `recovery_timeout_sec` takes effect at once. The half-open single probe is enforced
 * within a process; two processes may each send one probe. The concurrency cap is per process.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { writeJsonAtomic } from "../trust/atomicWrite.js";

export const CIRCUIT_OPEN_MESSAGE =
  "The configured LLM provider is currently unavailable due to continuous failures. Circuit breaker is engaged to protect the system. Please wait a moment before trying again.";

export interface LlmCircuitOptions {
  /** DeerFlow `circuit_breaker.failure_threshold`. */
  failureThreshold: number;
  /** DeerFlow `circuit_breaker.recovery_timeout_sec`, in ms. */
  recoveryTimeoutMs: number;
  /** DeerFlow `llm_call.max_concurrent_calls`; 0 = no cap. */
  maxConcurrentCalls: number;
  /** Where the breaker state is shared across processes; absent → this process only. */
  stateFile?: string;
  now?: () => number;
}

export const DEFAULT_LLM_CIRCUIT: LlmCircuitOptions = { failureThreshold: 5, recoveryTimeoutMs: 60_000, maxConcurrentCalls: 0 };

type CircuitState = "closed" | "open" | "half_open";
interface EndpointRecord {
  state: CircuitState;
  failures: number;
  opened_at: number;
}

let options: LlmCircuitOptions = DEFAULT_LLM_CIRCUIT;
const memory = new Map<string, EndpointRecord>();
const probes = new Set<string>();
const limiters = new Map<string, Limiter>();

/** Set once per process by whoever loaded the harness configuration (CLI, harness server). */
export function configureLlmCircuit(o: Partial<LlmCircuitOptions>): void {
  options = { ...DEFAULT_LLM_CIRCUIT, ...o };
}

export function llmCircuitStateFile(dataDir: string): string {
  return join(dataDir, "llm-circuit.json");
}

function load(): Record<string, EndpointRecord> {
  if (!options.stateFile) return Object.fromEntries(memory);
  try {
    const raw = JSON.parse(readFileSync(options.stateFile, "utf8")) as { endpoints?: Record<string, EndpointRecord> };
    return raw.endpoints ?? {};
  } catch {
    return {}; // missing or unreadable: closed (fail open)
  }
}

function save(endpoint: string, rec: EndpointRecord): void {
  memory.set(endpoint, rec);
  if (!options.stateFile) return;
  try {
    const all = load();
    all[endpoint] = rec;
    mkdirSync(dirname(options.stateFile), { recursive: true });
    writeJsonAtomic(options.stateFile, { version: 1, endpoints: all }); // readers see the old or the new file, never half of one
  } catch {
    // Persisting is best effort: the in-process breaker still works.
  }
}

const record = (endpoint: string): EndpointRecord => load()[endpoint] ?? memory.get(endpoint) ?? { state: "closed", failures: 0, opened_at: 0 };
const now = () => (options.now ?? Date.now)();

/** True when the call must fail fast (DeerFlow `_check_circuit`); otherwise the call may proceed (maybe as the probe). */
export function circuitIsOpen(endpoint: string): boolean {
  const rec = record(endpoint);
  if (rec.state === "closed") return false;
  if (rec.state === "open" && now() < rec.opened_at + options.recoveryTimeoutMs) return true;
  // Cool-down over (or already half-open): one probe at a time in this process.
  if (probes.has(endpoint)) return true;
  probes.add(endpoint);
  if (rec.state !== "half_open") save(endpoint, { ...rec, state: "half_open" });
  return false;
}

export function recordSuccess(endpoint: string): void {
  probes.delete(endpoint);
  const rec = record(endpoint);
  if (rec.state !== "closed" || rec.failures > 0) save(endpoint, { state: "closed", failures: 0, opened_at: 0 });
}

export function recordFailure(endpoint: string): void {
  const wasProbe = probes.delete(endpoint);
  const rec = record(endpoint);
  if (wasProbe || rec.state === "half_open") {
    save(endpoint, { state: "open", failures: rec.failures, opened_at: now() });
    return;
  }
  const failures = rec.failures + 1;
  save(endpoint, failures >= options.failureThreshold ? { state: "open", failures, opened_at: now() } : { ...rec, failures });
}

/** A call that neither succeeded nor counted (non-retriable, burst-rate, cancelled) frees the probe. */
export function releaseProbe(endpoint: string): void {
  probes.delete(endpoint);
}

/** FIFO semaphore; `acquire` resolves with a release function. */
class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  constructor(private readonly max: number) {}
  async acquire(signal?: AbortSignal): Promise<() => void> {
    if (this.active >= this.max) {
      await new Promise<void>((resolve, reject) => {
        const go = () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        };
        const onAbort = () => {
          const i = this.waiting.indexOf(go);
          if (i >= 0) this.waiting.splice(i, 1);
          reject(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
        };
        this.waiting.push(go);
        signal?.addEventListener("abort", onAbort, { once: true });
      });
    } else {
      this.active++;
    }
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next(); // the slot passes straight to the next waiter
      else this.active--;
    };
  }
}

/** Run `call` within the endpoint's concurrency cap (none when `max_concurrent_calls` is 0). */
export async function withConcurrencyCap<T>(endpoint: string, signal: AbortSignal | undefined, call: () => Promise<T>): Promise<T> {
  if (options.maxConcurrentCalls <= 0) return call();
  let limiter = limiters.get(`${endpoint}\0${options.maxConcurrentCalls}`);
  if (!limiter) {
    limiter = new Limiter(options.maxConcurrentCalls);
    limiters.set(`${endpoint}\0${options.maxConcurrentCalls}`, limiter);
  }
  const release = await limiter.acquire(signal);
  try {
    return await call();
  } finally {
    release();
  }
}

/** The breaker key of a chat model: its base URL and model id (ChatOpenAI's fields, read defensively). */
export function endpointOf(model: unknown): string {
  const m = model as { clientConfig?: { baseURL?: unknown }; model?: unknown; modelName?: unknown } | null;
  const base = typeof m?.clientConfig?.baseURL === "string" ? m.clientConfig.baseURL : "https://api.openai.com/v1";
  const id = typeof m?.model === "string" ? m.model : typeof m?.modelName === "string" ? m.modelName : "unknown";
  return `${base.replace(/\/+$/, "")}#${id}`;
}
