// Shared by tests/figure/snippet.test.mjs: the snippet files it writes, a listener that counts
// connections, and small test snippets for each library written against anyplot's page contract
// (#container, window.ANYPLOT_TOKENS / ANYPLOT_SIZE), drawing bars in the palette's first colour.
import fs from 'node:fs';
import os from 'node:os';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodePng } from '../../sandbox/figure/lib/png.mjs';

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, '..', '..');
export const MODULES = path.join(ROOT, 'runtime', 'js', 'node_modules');
export const CATALOGUE = path.join(ROOT, 'tests', 'catalogue', 'plots');
export const AS_ROOT = process.getuid() === 0;
export const BROWSER_OPTS = { ...(AS_ROOT ? { uid: 65533, gid: 65533 } : {}), plotlyJs: '', bokehDir: '' };

export function tmpDir(prefix) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  fs.chmodSync(d, 0o711);   // Chromium's own uid passes through
  return d;
}

// Writes `text` as a snippet file in dir (lines joined when an array).
export function writer(dir) {
  let n = 0;
  return (ext, text) => {
    const p = path.join(dir, `s${++n}${ext}`);
    fs.writeFileSync(p, Array.isArray(text) ? text.join('\n') : text);
    return p;
  };
}

export const pngOf = (p) => decodePng(fs.readFileSync(p));
export const version = (pkg) => JSON.parse(fs.readFileSync(path.join(MODULES, pkg, 'package.json'), 'utf8')).version;

// A local TCP listener that counts connections (and keeps each one's first line, for the
// message): the marker of the network refusals.
export async function listener() {
  const l = { connections: 0, lines: [] };
  l.server = net.createServer((s) => {
    l.connections++;
    s.once('data', (d) => l.lines.push(d.toString('latin1').split('\r\n')[0].slice(0, 120)));
    setTimeout(() => s.destroy(), 100);
  });
  await new Promise((r) => l.server.listen(0, '127.0.0.1', r));
  l.port = l.server.address().port;
  l.url = `http://127.0.0.1:${l.port}`;
  return l;
}
export const settle = (ms = 300) => new Promise((r) => setTimeout(r, ms));

// Test snippets, one per library: three bars in palette[0] on the page's own background.
export function drawing(library, orientation) {
  const head = `// test snippet\n//# anyplot-orientation: ${orientation}\nconst t = window.ANYPLOT_TOKENS;\n`;
  switch (library) {
    case 'chartjs': return `${head}const c = document.createElement("canvas");
document.getElementById("container").appendChild(c);
new Chart(c, { type: "bar", data: { labels: ["a", "b", "c"], datasets: [{ data: [3, 1, 2], backgroundColor: t.palette[0] }] },
  options: { animation: false, responsive: true, maintainAspectRatio: false, plugins: { legend: { display: false } },
    scales: { x: { ticks: { color: t.ink } }, y: { ticks: { color: t.ink }, grid: { color: t.grid } } } } });\n`;
    case 'd3': return `${head}const { width, height } = window.ANYPLOT_SIZE;
const svg = d3.select("#container").append("svg").attr("width", width).attr("height", height);
const x = d3.scaleBand().domain(["a", "b", "c"]).range([60, width - 20]).padding(0.2);
const y = d3.scaleLinear().domain([0, 3]).range([height - 40, 20]);
svg.selectAll("rect").data([3, 1, 2]).join("rect").attr("x", (d, i) => x("abc"[i])).attr("y", (d) => y(d))
  .attr("width", x.bandwidth()).attr("height", (d) => y(0) - y(d)).attr("fill", t.palette[0]);
svg.append("g").attr("transform", \`translate(0,\${height - 40})\`).call(d3.axisBottom(x));\n`;
    case 'echarts': return `${head}const chart = echarts.init(document.getElementById("container"), null, { renderer: "canvas" });
chart.on("finished", () => { window.__anyplotReady = true; });
chart.setOption({ animation: false, backgroundColor: "transparent", xAxis: { type: "category", data: ["a", "b", "c"] },
  yAxis: { type: "value", axisLabel: { color: t.ink } }, series: [{ type: "bar", data: [3, 1, 2], itemStyle: { color: t.palette[0] } }] });\n`;
    case 'highcharts': return `${head}Highcharts.chart("container", { chart: { type: "column", backgroundColor: t.pageBg, animation: false },
  credits: { enabled: false }, title: { text: null }, legend: { enabled: false }, xAxis: { categories: ["a", "b", "c"] },
  plotOptions: { series: { animation: false, color: t.palette[0] } }, series: [{ data: [3, 1, 2] }] });\n`;
    case 'muix': return `// test snippet\n//# anyplot-orientation: ${orientation}
import { BarChart } from "@mui/x-charts/BarChart";
const t = window.ANYPLOT_TOKENS;
export default function Bars() {
  const { width, height } = window.ANYPLOT_SIZE;
  return <BarChart width={width} height={height} skipAnimation colors={[t.palette[0]]}
    xAxis={[{ scaleType: "band", data: ["a", "b", "c"] }]} series={[{ data: [3, 1, 2] }]} />;
}\n`;
    default: throw new Error(library);
  }
}

// Every JS file of tests/catalogue: {spec, library, file}.
export function catalogueFiles() {
  const out = [];
  for (const spec of fs.readdirSync(CATALOGUE).sort()) {
    const dir = path.join(CATALOGUE, spec, 'implementations', 'javascript');
    if (!fs.existsSync(dir)) continue;
    for (const name of fs.readdirSync(dir).sort()) out.push({ spec, library: name.replace(/\.(js|tsx)$/, ''), file: path.join(dir, name) });
  }
  return out;
}

// Paths under dir (recursively) whose name contains `marker`.
export function findNamed(dir, marker) {
  const found = [];
  const walk = (d) => {
    let entries;
    try { entries = fs.readdirSync(d, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.name.includes(marker)) found.push(p);
      if (e.isDirectory() && !e.isSymbolicLink()) walk(p);
    }
  };
  walk(dir);
  return found;
}
