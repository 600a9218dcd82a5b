/**
 * The DeerFlow panel in a real VS Code (code-server 4.139.1 by default, DEERFLOW_CODE_SERVER=4.100.3
 * for the older one; headless chromium), against the
 * scripted model server:
 *   - activation: code-server spawn → workbench → extension host up → Open Panel → panel ready,
 *     and the first prompt's first token on screen;
 *   - showing a thread: hide the view and show it again (the panel keeps no context when hidden,
 *     so it replays the thread) for a 2-message thread and for a ~1,000-message one — the ratio
 *     is what the virtualized list is for;
 *   - 10,000 tokens streaming into the panel: long tasks (PerformanceObserver 'longtask') and
 *     dropped frames (requestAnimationFrame gaps) inside the webview frame, per second, against
 *     the same panel idle.
 * Benchmarks measure; they never assert timings. Needs `npm run build` (the bench script does it)
 * and code-server (installed on demand by scripts/ci/code-server-setup.sh).
 */
import type { Frame } from "playwright-core";
import type { Bench, Row } from "./run.js";
import { startModelServer } from "../fixtures/modelServer.js";
import type { ScriptedReply, ScriptedToolCall } from "../fixtures/modelServer.js";
import { scenarioScript, tagged } from "../vscode/scenarios.js";
import { CONTAINER_TITLE, Panel, startDeerFlow } from "../vscode/deerflow.js";
import { activityBarEntry, runCommand, webviewFrame } from "../vscode/workbench.js";

const STREAM_TOKENS = 10_000;
const SEED_RUNS = 9;
/** Below LoopDetection's per-tool warning (30 calls of one tool per run). */
const CALLS_PER_TOOL = 29;
const SHOW_REPEATS = 3;
const IDLE_WINDOW_MS = 3000;

function seedRun(i: number): ScriptedReply[] {
  const calls = (name: string, args: (k: number) => Record<string, unknown>): ScriptedToolCall[] =>
    Array.from({ length: CALLS_PER_TOOL }, (_, k) => ({ name, args: args(k) }));
  return [
    { toolCalls: calls("ls", (k) => ({ description: `seed ${i}.${k}`, path: "/mnt/user-data/workspace" })) },
    { toolCalls: calls("glob", (k) => ({ description: `seed ${i}.${k}`, pattern: "**/*.ts", path: "/mnt/user-data/workspace" })) },
    { toolCalls: calls("grep", (k) => ({ description: `seed ${i}.${k}`, pattern: "greet", path: "/mnt/user-data/workspace" })) },
    { toolCalls: calls("read_file", (k) => ({ description: `seed ${i}.${k}`, path: "/mnt/user-data/workspace/README.md" })) },
    { content: `seed run ${i} done` },
  ];
}

const streamText = Array.from({ length: STREAM_TOKENS - 1 }, (_, i) => `tok${i}`).join(" ") + " streamEND";

const scenarios: Record<string, ScriptedReply[]> = {
  first: [{ content: "first answer" }],
  stream: [{ content: streamText, chunkDelayMs: 1 }],
  base: [{ content: "baseline answer" }],
};
for (let i = 1; i <= SEED_RUNS; i++) scenarios[`seed${i}`] = seedRun(i);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? NaN;
const round = (n: number) => Math.round(n);

interface FrameStats {
  ms: number;
  frames: number;
  droppedFrames: number;
  longTasks: number;
  longTaskMs: number;
  maxLongTaskMs: number;
}

// The probes are strings: a function passed to evaluate() would carry tsx/esbuild's `__name`
// helper calls into the page, where that helper does not exist.
const START_PROBE = `(() => {
  if (window.__bench) window.__bench.stop();
  const b = { t0: performance.now(), frames: 0, dropped: 0, longTasks: [], stop: () => {} };
  let running = true;
  const obs = new PerformanceObserver((list) => { for (const e of list.getEntries()) b.longTasks.push(e.duration); });
  obs.observe({ type: "longtask" });
  let last = performance.now();
  const budget = 1000 / 60;
  const tick = (t) => {
    if (!running) return;
    b.frames++;
    const gap = t - last;
    last = t;
    if (gap > budget * 1.5) b.dropped += Math.round(gap / budget) - 1;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  b.stop = () => { running = false; obs.disconnect(); };
  window.__bench = b;
})()`;

const STOP_PROBE = `(() => {
  const b = window.__bench;
  b.stop();
  return {
    ms: performance.now() - b.t0,
    frames: b.frames,
    droppedFrames: b.dropped,
    longTasks: b.longTasks.length,
    longTaskMs: b.longTasks.reduce((a, x) => a + x, 0),
    maxLongTaskMs: b.longTasks.reduce((a, x) => Math.max(a, x), 0),
  };
})()`;

/** Starts counting frames and long tasks inside the webview. */
async function startProbe(frame: Frame): Promise<void> {
  await frame.evaluate(START_PROBE);
}

async function stopProbe(frame: Frame): Promise<FrameStats> {
  return frame.evaluate<FrameStats>(STOP_PROBE);
}

const bench: Bench = {
  name: "vscode panel",
  description: "DeerFlow panel in code-server + chromium: activation, showing a 1,000-message thread, 10,000 tokens streaming",
  async run(): Promise<Row[]> {
    const model = await startModelServer({ script: scenarioScript(scenarios), chunkDelayMs: 0, waitTimeoutMs: 300_000 });
    const t0 = performance.now();
    const df = await startDeerFlow({ model, label: "deerflow-bench-vscode" });
    const rows: Row[] = [];
    try {
      const { page, cs } = df;
      const panel = new Panel(page);
      const activation = (step: string, ms: number) => rows.push({ section: "activation", step, ms: round(ms) });
      activation("code-server spawn → listening", cs.listenMs);
      activation("page load → workbench rendered", df.firstLoad.workbenchMs);
      activation("page load → DeerFlow in the activity bar (extension host up)", df.firstLoad.activityBarMs);
      activation("code-server spawn → DeerFlow in the activity bar", performance.now() - t0);
      let t = performance.now();
      await panel.open();
      activation("Open Panel command → panel ready (message box)", performance.now() - t);
      t = performance.now();
      await panel.send(tagged("first", "Hello."));
      await panel.message("ai", "first answer").waitFor({ timeout: 60_000 });
      activation("first prompt → answer on screen (harness start included)", performance.now() - t);
      await panel.status("success").waitFor({ timeout: 60_000 });

      // --- 10,000 tokens streaming, against the same panel idle ---
      const frame = await webviewFrame(page);
      await startProbe(frame);
      await new Promise((r) => setTimeout(r, IDLE_WINDOW_MS)); // a measurement window, not a wait for a condition
      const idle = await stopProbe(frame);
      await startProbe(frame);
      t = performance.now();
      await panel.send(tagged("stream", "Stream a lot."));
      await panel.message("ai", "streamEND").waitFor({ timeout: 300_000 });
      const streamMs = performance.now() - t;
      const streaming = await stopProbe(frame);
      await panel.status("success").waitFor({ timeout: 60_000 });
      const perSec = (x: number, s: FrameStats) => (x * 1000) / s.ms;
      const frameRow = (phase: string, s: FrameStats, extra: Row = {}): Row => ({
        section: "streaming",
        step: phase,
        ms: round(s.ms),
        fps: perSec(s.frames, s),
        "dropped frames/s": perSec(s.droppedFrames, s),
        "long tasks": s.longTasks,
        "long-task ms/s": perSec(s.longTaskMs, s),
        "max long task ms": round(s.maxLongTaskMs),
        ...extra,
      });
      rows.push(frameRow("panel idle (baseline)", idle));
      rows.push(
        frameRow(`${STREAM_TOKENS.toLocaleString("en")} tokens streaming`, streaming, {
          "tokens/s": round((STREAM_TOKENS * 1000) / streamMs),
          "long-task ms/s vs idle": idle.longTaskMs > 0 ? perSec(streaming.longTaskMs, streaming) / perSec(idle.longTaskMs, idle) : "idle had none",
          "fps vs idle": perSec(streaming.frames, streaming) / perSec(idle.frames, idle),
        }),
      );

      // --- showing a thread: 2 messages vs ~1,000 ---
      const show = async (lastText: string): Promise<number> => {
        const times: number[] = [];
        for (let i = 0; i < SHOW_REPEATS; i++) {
          await page.locator('.activitybar a.action-label[aria-label^="Explorer"]').click();
          await page.locator("iframe.webview.ready").waitFor({ state: "detached", timeout: 30_000 });
          const s = performance.now();
          await activityBarEntry(page, CONTAINER_TITLE).click();
          await panel.message("ai", lastText).waitFor({ timeout: 120_000 });
          times.push(performance.now() - s);
        }
        return median(times);
      };
      await runCommand(page, "DeerFlow: New Thread");
      await panel.send(tagged("base", "A short thread."));
      await panel.message("ai", "baseline answer").waitFor({ timeout: 60_000 });
      await panel.status("success").waitFor({ timeout: 60_000 });
      const smallMs = await show("baseline answer");
      rows.push({ section: "show thread", step: "2 messages (baseline)", messages: 2, ms: round(smallMs), "vs baseline": 1 });

      const seedStart = performance.now();
      for (let i = 1; i <= SEED_RUNS; i++) {
        await panel.send(tagged(`seed${i}`, `Seed run ${i}.`));
        await panel.message("ai", `seed run ${i} done`).waitFor({ timeout: 300_000 });
        await panel.status("success").waitFor({ timeout: 60_000 });
      }
      const seedMs = performance.now() - seedStart;
      // The last model request carried the whole thread (minus the system prompt); its answer adds one.
      const last = model.requests.at(-1)?.body?.messages ?? [];
      const messages = last.filter((m) => m.role !== "system").length + 1;
      const bigMs = await show(`seed run ${SEED_RUNS} done`);
      rows.push({ section: "show thread", step: `${messages} messages (seeded through the panel in ${(seedMs / 1000).toFixed(1)} s)`, messages, ms: round(bigMs), "vs baseline": bigMs / smallMs });
      rows.push({ section: "memory", step: "code-server tree (with the harness), end of bench", MiB: cs.rssMiB() });
      rows.push({ section: "memory", step: "chromium, end of bench", MiB: df.browser.rssMiB() });
    } catch (e) {
      rows.push({ section: "error", step: e instanceof Error ? e.message.split("\n")[0]! : String(e) });
    } finally {
      await df.close();
      await model.close();
    }
    return rows;
  },
};

export default bench;
