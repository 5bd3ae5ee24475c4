// plotq catalogue
// bar-basic: Orders per Month
// Library: echarts 6.1.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const chart = echarts.init(document.getElementById("container"), null, { renderer: "canvas" });
// The harness screenshots as soon as echarts says the frame is drawn.
chart.on("finished", () => { window.__anyplotReady = true; });
chart.setOption({
  animation: false,
  backgroundColor: "transparent",
  color: t.palette,
  title: { text: "bar-basic · echarts · plotq", left: "center", top: 20, textStyle: { color: t.ink, fontSize: 28 } },
  grid: { left: 100, right: 50, top: 100, bottom: 80 },
  xAxis: { type: "category", data: ["Jan", "Feb", "Mar", "Apr", "May", "Jun"],
           axisLabel: { color: t.inkSoft, fontSize: 18 }, axisLine: { lineStyle: { color: t.inkSoft } } },
  yAxis: { type: "value", name: "orders", nameTextStyle: { color: t.ink, fontSize: 20 },
           axisLabel: { color: t.inkSoft, fontSize: 18 }, splitLine: { lineStyle: { color: t.grid } } },
  series: [{ type: "bar", data: [42, 55, 38, 67, 71, 49], barWidth: "60%" }],
});
