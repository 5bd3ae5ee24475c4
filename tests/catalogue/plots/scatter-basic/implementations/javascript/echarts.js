// plotq catalogue
// scatter-basic: Height vs Weight
// Library: echarts 6.1.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
let seed = 7;
const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 4294967296; };
const points = Array.from({ length: 60 }, () => {
  const h = 150 + rand() * 45;
  return [+h.toFixed(1), +(0.9 * h - 80 + (rand() - 0.5) * 20).toFixed(1)];
});

const chart = echarts.init(document.getElementById("container"), null, { renderer: "canvas" });
chart.setOption({
  animation: false,
  backgroundColor: "transparent",
  title: { text: "scatter-basic · echarts · plotq", left: "center", top: 20, textStyle: { color: t.ink, fontSize: 28 } },
  grid: { left: 110, right: 50, top: 100, bottom: 90 },
  xAxis: { type: "value", scale: true, name: "height (cm)", nameLocation: "middle", nameGap: 45,
           nameTextStyle: { color: t.ink, fontSize: 20 }, axisLabel: { color: t.inkSoft, fontSize: 18 },
           splitLine: { lineStyle: { color: t.grid } } },
  yAxis: { type: "value", scale: true, name: "weight (kg)", nameTextStyle: { color: t.ink, fontSize: 20 },
           axisLabel: { color: t.inkSoft, fontSize: 18 }, splitLine: { lineStyle: { color: t.grid } } },
  series: [{ type: "scatter", data: points, symbolSize: 14, itemStyle: { color: t.palette[2] } }],
});
