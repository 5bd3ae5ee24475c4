// plotq catalogue
// scatter-basic: Height vs Weight
// Library: d3 7.9.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const { width, height } = window.ANYPLOT_SIZE;
const margin = { top: 90, right: 50, bottom: 90, left: 110 };
let seed = 7;
const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 4294967296; };
const points = Array.from({ length: 60 }, () => {
  const h = 150 + rand() * 45;
  return [h, 0.9 * h - 80 + (rand() - 0.5) * 20];
});

const svg = d3.select("#container").append("svg").attr("width", width).attr("height", height);
const x = d3.scaleLinear().domain(d3.extent(points, (p) => p[0])).nice().range([margin.left, width - margin.right]);
const y = d3.scaleLinear().domain(d3.extent(points, (p) => p[1])).nice().range([height - margin.bottom, margin.top]);
const style = (g) => {
  g.selectAll("text").attr("fill", t.inkSoft).attr("font-size", 18);
  g.selectAll("line,path").attr("stroke", t.inkSoft);
};
svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`).call(d3.axisBottom(x)).call(style);
svg.append("g").attr("transform", `translate(${margin.left},0)`).call(d3.axisLeft(y)).call(style);
svg.append("g").selectAll("circle").data(points).join("circle")
  .attr("cx", (p) => x(p[0])).attr("cy", (p) => y(p[1])).attr("r", 7)
  .attr("fill", t.palette[2]).attr("fill-opacity", 0.85);
svg.append("text").attr("x", width / 2).attr("y", 50).attr("text-anchor", "middle")
  .attr("fill", t.ink).attr("font-size", 28).text("scatter-basic · d3 · plotq");
svg.append("text").attr("x", width / 2).attr("y", height - 30).attr("text-anchor", "middle")
  .attr("fill", t.ink).attr("font-size", 20).text("height (cm)");
