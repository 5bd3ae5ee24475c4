// plotq catalogue
// fail-js-blank: a snippet that draws nothing (its data filter leaves no rows)
// Library: d3 7.9.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const { width, height } = window.ANYPLOT_SIZE;
const rows = [3, 5, 2].filter((v) => v > 10);
const svg = d3.select("#container").append("svg").attr("width", width).attr("height", height);
svg.selectAll("rect").data(rows).join("rect")
  .attr("x", (d, i) => 100 + i * 200).attr("y", 100).attr("width", 150).attr("height", (d) => d * 50)
  .attr("fill", t.palette[0]);
