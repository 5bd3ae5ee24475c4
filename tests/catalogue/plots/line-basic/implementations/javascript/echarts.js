// plotq catalogue
// line-basic: Temperature over a Day
// Library: echarts 6.1.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const hours = Array.from({ length: 24 }, (_, h) => `${h}:00`);
const temp = hours.map((_, h) => +(14 + 7 * Math.sin(((h - 9) / 24) * 2 * Math.PI)).toFixed(1));

const chart = echarts.init(document.getElementById("container"), null, { renderer: "svg" });
chart.on("finished", () => { window.__anyplotReady = true; });
chart.setOption({
  animation: false,
  backgroundColor: "transparent",
  title: { text: "line-basic · echarts · plotq", left: "center", top: 20, textStyle: { color: t.ink, fontSize: 28 } },
  grid: { left: 100, right: 50, top: 100, bottom: 80 },
  xAxis: { type: "category", data: hours, boundaryGap: false, axisLabel: { color: t.inkSoft, fontSize: 16 },
           axisLine: { lineStyle: { color: t.inkSoft } } },
  yAxis: { type: "value", name: "temperature (°C)", min: 5, nameTextStyle: { color: t.ink, fontSize: 20 },
           axisLabel: { color: t.inkSoft, fontSize: 18 }, splitLine: { lineStyle: { color: t.grid } } },
  series: [{ type: "line", data: temp, smooth: true, showSymbol: false, lineStyle: { width: 4, color: t.palette[0] } }],
});
