// plotq catalogue
// scatter-basic: Height vs Weight
// Library: highcharts 12.6.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
let seed = 7;
const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 4294967296; };
const points = Array.from({ length: 60 }, () => {
  const h = 150 + rand() * 45;
  return [+h.toFixed(1), +(0.9 * h - 80 + (rand() - 0.5) * 20).toFixed(1)];
});

Highcharts.chart("container", {
  chart: { type: "scatter", backgroundColor: t.pageBg, animation: false, style: { fontFamily: "inherit" } },
  credits: { enabled: false },
  title: { text: "scatter-basic · highcharts · plotq", style: { color: t.ink, fontSize: "28px" } },
  legend: { enabled: false },
  xAxis: { title: { text: "height (cm)", style: { color: t.ink, fontSize: "20px" } }, gridLineWidth: 1,
           gridLineColor: t.grid, labels: { style: { color: t.inkSoft, fontSize: "18px" } } },
  yAxis: { title: { text: "weight (kg)", style: { color: t.ink, fontSize: "20px" } }, gridLineColor: t.grid,
           labels: { style: { color: t.inkSoft, fontSize: "18px" } } },
  plotOptions: { series: { animation: false, color: t.palette[2], marker: { radius: 7 } } },
  series: [{ name: "people", data: points }],
});
