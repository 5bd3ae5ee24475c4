// plotq catalogue
// line-basic: Temperature over a Day
// Library: highcharts 12.6.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const temp = Array.from({ length: 24 }, (_, h) => +(14 + 7 * Math.sin(((h - 9) / 24) * 2 * Math.PI)).toFixed(1));

Highcharts.chart("container", {
  chart: { type: "spline", backgroundColor: t.pageBg, animation: false, style: { fontFamily: "inherit" } },
  credits: { enabled: false },
  title: { text: "line-basic · highcharts · plotq", style: { color: t.ink, fontSize: "28px" } },
  legend: { enabled: false },
  xAxis: { title: { text: "hour", style: { color: t.ink, fontSize: "20px" } }, lineColor: t.inkSoft,
           labels: { style: { color: t.inkSoft, fontSize: "18px" } } },
  yAxis: { title: { text: "temperature (°C)", style: { color: t.ink, fontSize: "20px" } }, gridLineColor: t.grid,
           labels: { style: { color: t.inkSoft, fontSize: "18px" } } },
  plotOptions: { series: { animation: false, color: t.palette[0], lineWidth: 4, marker: { enabled: false } } },
  series: [{ name: "°C", data: temp }],
});
