/**
 * The config file's `memory` key (DeerFlow `config/memory_config.py`, reference §9.1): on by
 * default, as in DeerFlow. Off (config, `run --no-memory`, the `deerflow.memory.enabled`
 * setting) means no extraction and no injection. DeerFlow's nested `backend_config.*` (DeerMem's
 * keys) and its legacy top-level keys are mapped onto these flat ones by config/deerflowKeys.ts.
 */
import { z } from "zod";

export const MemoryConfigZ = z
  .object({
    enabled: z.boolean().default(true),
    /** DeerFlow `injection_enabled`: off → facts are still extracted, but never given to the model. */
    injection_enabled: z.boolean().default(true),
    /** The extraction model (a configured model's name); absent → the run's own model. */
    model_name: z.string().min(1).optional(),
    /** DeerFlow `max_injection_tokens`: the `<memory>` block's budget. */
    max_injection_tokens: z.number().int().min(0).default(2000),
    /** DeerFlow's debounce: a conversation waits this long for the next run before extraction (the harness server). */
    debounce_seconds: z.number().min(0).default(30),
    /** DeerFlow (DeerMem) `max_facts`: the least certain facts go first beyond it. */
    max_facts: z.number().int().min(1).default(100),
    /** DeerFlow (DeerMem) `fact_confidence_threshold`: a new fact below it is not stored. */
    fact_confidence_threshold: z.number().min(0).max(1).default(0.7),
  })
  .strict();
export type MemoryConfig = z.infer<typeof MemoryConfigZ>;

export const MEMORY_DEFAULTS: MemoryConfig = MemoryConfigZ.parse({});
