// plotq catalogue
// heatmap-square: Correlation Heatmap on a Square Canvas
// Library: echarts 6.1.0 | JavaScript (Chromium)
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
const cells = corr.flatMap((row, i) => row.map((v, j) => [j, i, v]));

const chart = echarts.init(document.getElementById("container"), null, { renderer: "canvas" });
chart.on("finished", () => { window.__anyplotReady = true; });
chart.setOption({
  animation: false,
  backgroundColor: "transparent",
  title: { text: "heatmap-square · echarts · plotq", left: "center", top: 30, textStyle: { color: t.ink, fontSize: 28 } },
  grid: { left: 130, right: 60, top: 110, bottom: 150 },
  xAxis: { type: "category", data: names, axisLabel: { color: t.inkSoft, fontSize: 20 }, splitArea: { show: false } },
  yAxis: { type: "category", data: names, inverse: true, axisLabel: { color: t.inkSoft, fontSize: 20 } },
  visualMap: { min: -1, max: 1, calculable: false, orient: "horizontal", left: "center", bottom: 40,
               inRange: { color: t.div }, textStyle: { color: t.inkSoft, fontSize: 16 } },
  series: [{ type: "heatmap", data: cells, label: { show: true, color: t.ink, fontSize: 22, formatter: (p) => p.value[2].toFixed(2) } }],
});
