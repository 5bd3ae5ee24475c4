// plotq catalogue
// heatmap-square: Correlation Heatmap on a Square Canvas
// Library: chartjs 4.4.7 | JavaScript (Chromium)
//# anyplot-orientation: square

const t = window.ANYPLOT_TOKENS;
const names = ["speed", "load", "temp", "noise", "wear"];
const corr = [
  [1.0, 0.62, -0.08, 0.15, 0.05],
  [0.62, 1.0, 0.02, 0.21, -0.11],
  [-0.08, 0.02, 1.0, -0.35, 0.48],
  [0.15, 0.21, -0.35, 1.0, -0.02],
  [0.05, -0.11, 0.48, -0.02, 1.0],
];
// Diverging colour: t.div is [negative, midpoint (the page background), positive].
const rgb = (c) => (c.startsWith("#") ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : [128, 128, 128]);
const mix = (a, b, f) => `rgb(${rgb(a).map((v, i) => Math.round(v + (rgb(b)[i] - v) * f)).join(",")})`;
const colour = (v) => (v < 0 ? mix(t.div[1], t.div[0], -v) : mix(t.div[1], t.div[2], v));

// Core Chart.js has no matrix chart: one square point per cell, sized to the cell.
const cells = [];
corr.forEach((row, i) => row.forEach((v, j) => cells.push({ x: j, y: i, v })));
const canvas = document.createElement("canvas");
document.getElementById("container").appendChild(canvas);
new Chart(canvas, {
  type: "scatter",
  data: { datasets: [{ data: cells, pointStyle: "rect", pointRadius: 130, pointHoverRadius: 130,
                       backgroundColor: cells.map((c) => colour(c.v)), borderColor: t.pageBg, borderWidth: 2 }] },
  options: {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    layout: { padding: 40 },
    plugins: {
      legend: { display: false },
      title: { display: true, text: "heatmap-square · chartjs · plotq", color: t.ink, font: { size: 28 } },
    },
    scales: {
      x: { min: -0.5, max: 4.5, ticks: { stepSize: 1, color: t.inkSoft, font: { size: 18 }, callback: (v) => names[v] ?? "" },
           grid: { display: false } },
      y: { min: -0.5, max: 4.5, reverse: true, ticks: { stepSize: 1, color: t.inkSoft, font: { size: 18 }, callback: (v) => names[v] ?? "" },
           grid: { display: false } },
    },
  },
});
