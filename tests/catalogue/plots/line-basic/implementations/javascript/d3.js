// plotq catalogue
// line-basic: Temperature over a Day
// Library: d3 7.9.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const { width, height } = window.ANYPLOT_SIZE;
const margin = { top: 90, right: 50, bottom: 80, left: 100 };
const data = Array.from({ length: 24 }, (_, h) => [h, 14 + 7 * Math.sin(((h - 9) / 24) * 2 * Math.PI)]);

const svg = d3.select("#container").append("svg").attr("width", width).attr("height", height);
const x = d3.scaleLinear().domain([0, 23]).range([margin.left, width - margin.right]);
const y = d3.scaleLinear().domain([5, 23]).range([height - margin.bottom, margin.top]);
const style = (g) => {
  g.selectAll("text").attr("fill", t.inkSoft).attr("font-size", 18);
  g.selectAll("line,path").attr("stroke", t.inkSoft);
};
svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`).call(d3.axisBottom(x).ticks(12)).call(style);
svg.append("g").attr("transform", `translate(${margin.left},0)`).call(d3.axisLeft(y)).call(style);
svg.append("path").datum(data)
  .attr("fill", "none").attr("stroke", t.palette[0]).attr("stroke-width", 4)
  .attr("d", d3.line().x((d) => x(d[0])).y((d) => y(d[1])).curve(d3.curveMonotoneX));
svg.append("text").attr("x", width / 2).attr("y", 50).attr("text-anchor", "middle")
  .attr("fill", t.ink).attr("font-size", 28).text("line-basic · d3 · plotq");
