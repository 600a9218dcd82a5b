import { readFileSync } from "node:fs";
const prof = JSON.parse(readFileSync(process.argv[2], "utf8"));
const nodes = new Map(prof.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = prof.timeDeltas; let total = 0;
const counts = new Map();
prof.samples.forEach((id, i) => { counts.set(id, (counts.get(id) ?? 0) + (dt[i] ?? 0)); total += dt[i] ?? 0; });
// self time by function+url
for (const [id, t] of counts) { const n = nodes.get(id); const k = `${n.callFrame.functionName || "(anon)"} ${n.callFrame.url.replace(/.*node_modules\//, "nm/").replace(/.*\/work\/main\//, "")}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + t); }
const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[3] ?? 40));
console.log("total ms", (total / 1000).toFixed(0));
for (const [k, t] of top) console.log((t / 1000).toFixed(1).padStart(8), (100 * t / total).toFixed(1).padStart(5) + "%", k);
// inclusive by package
const parent = new Map(); for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const incl = new Map();
for (const [id, t] of counts) { const seen = new Set(); let cur = id; while (cur !== undefined) { const n = nodes.get(cur); const u = n.callFrame.url; let k = u.includes("node_modules/") ? "nm:" + u.split("node_modules/")[1].split("/").slice(0, u.split("node_modules/")[1].startsWith("@") ? 2 : 1).join("/") : u.includes("/work/main/") ? u.split("/work/main/")[1].split("/").slice(0, 3).join("/") : u ? "node:" + u.slice(0, 30) : "(native)"; if (!seen.has(k)) { seen.add(k); incl.set(k, (incl.get(k) ?? 0) + t); } cur = parent.get(cur); } }
console.log("--- inclusive by module");
for (const [k, t] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log((100 * t / total).toFixed(1).padStart(6) + "%", k);
console.log("--- inclusive by function (extension/ and key libs)");
const inclF = new Map();
for (const [id, t] of counts) { const seen = new Set(); let cur = id; while (cur !== undefined) { const n = nodes.get(cur); const u = n.callFrame.url; if (u.includes("/work/main/extension/") || /pregel\/(index|loop|runner|algo)|checkpoint\/|channels\//.test(u)) { const k = `${n.callFrame.functionName || "(anon)"} ${u.split("/work/main/").pop().replace(/.*node_modules\//, "nm/")}:${n.callFrame.lineNumber}`; if (!seen.has(k)) { seen.add(k); inclF.set(k, (inclF.get(k) ?? 0) + t); } } cur = parent.get(cur); } }
for (const [k, t] of [...inclF].sort((a, b) => b[1] - a[1]).slice(0, Number(process.argv[4] ?? 60))) console.log((100 * t / total).toFixed(1).padStart(6) + "%", k);
