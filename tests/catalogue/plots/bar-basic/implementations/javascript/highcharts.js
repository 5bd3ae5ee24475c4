// plotq catalogue
// bar-basic: Orders per Month
// Library: highcharts 12.6.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
Highcharts.chart("container", {
  chart: { type: "column", backgroundColor: t.pageBg, animation: false, style: { fontFamily: "inherit" } },
  credits: { enabled: false },
  title: { text: "bar-basic · highcharts · plotq", style: { color: t.ink, fontSize: "28px" } },
  legend: { enabled: false },
  xAxis: { categories: ["Jan", "Feb", "Mar", "Apr", "May", "Jun"], labels: { style: { color: t.inkSoft, fontSize: "18px" } },
           lineColor: t.inkSoft },
  yAxis: { title: { text: "orders", style: { color: t.ink, fontSize: "20px" } }, gridLineColor: t.grid,
           labels: { style: { color: t.inkSoft, fontSize: "18px" } } },
  plotOptions: { series: { animation: false, color: t.palette[0] } },
  series: [{ name: "orders", data: [42, 55, 38, 67, 71, 49] }],
});
