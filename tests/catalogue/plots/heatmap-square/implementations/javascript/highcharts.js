// plotq catalogue
// heatmap-square: Correlation Heatmap on a Square Canvas
// Library: highcharts 12.6.0 | JavaScript (Chromium)
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

// Only the core bundle is on the page (no heatmap module): square scatter markers, one per cell.
const cells = corr.flatMap((row, i) => row.map((v, j) => ({ x: j, y: i, color: colour(v), v })));
Highcharts.chart("container", {
  chart: { type: "scatter", backgroundColor: t.pageBg, animation: false, style: { fontFamily: "inherit" } },
  credits: { enabled: false },
  title: { text: "heatmap-square · highcharts · plotq", style: { color: t.ink, fontSize: "28px" } },
  legend: { enabled: false },
  xAxis: { categories: names, min: -0.5, max: 4.5, labels: { style: { color: t.inkSoft, fontSize: "20px" } }, lineWidth: 0 },
  yAxis: { categories: names, min: -0.5, max: 4.5, reversed: true, title: { text: null }, gridLineWidth: 0,
           labels: { style: { color: t.inkSoft, fontSize: "20px" } } },
  plotOptions: { series: { animation: false, marker: { symbol: "square", radius: 90 },
                           dataLabels: { enabled: true, format: "{point.v:.2f}", style: { fontSize: "22px", color: t.ink, textOutline: "none" } } } },
  series: [{ name: "r", data: cells }],
});
