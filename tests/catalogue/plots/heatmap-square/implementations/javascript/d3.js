// plotq catalogue
// heatmap-square: Correlation Heatmap on a Square Canvas
// Library: d3 7.9.0 | JavaScript (Chromium)
//# anyplot-orientation: square

const t = window.ANYPLOT_TOKENS;
const { width, height } = window.ANYPLOT_SIZE;
const margin = { top: 110, right: 60, bottom: 90, left: 130 };
const names = ["speed", "load", "temp", "noise", "wear"];
const corr = [
  [1.0, 0.62, -0.08, 0.15, 0.05],
  [0.62, 1.0, 0.02, 0.21, -0.11],
  [-0.08, 0.02, 1.0, -0.35, 0.48],
  [0.15, 0.21, -0.35, 1.0, -0.02],
  [0.05, -0.11, 0.48, -0.02, 1.0],
];
// Diverging colour: t.div is [negative, midpoint (the page background), positive].
const rgb = (c) => (c.startsWith("#") ? [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16)) : [128, 128, 128]);
const mix = (a, b, f) => `rgb(${rgb(a).map((v, i) => Math.round(v + (rgb(b)[i] - v) * f)).join(",")})`;
const colour = (v) => (v < 0 ? mix(t.div[1], t.div[0], -v) : mix(t.div[1], t.div[2], v));

const svg = d3.select("#container").append("svg").attr("width", width).attr("height", height);
const x = d3.scaleBand().domain(names).range([margin.left, width - margin.right]).padding(0.03);
const y = d3.scaleBand().domain(names).range([margin.top, height - margin.bottom]).padding(0.03);
const cells = corr.flatMap((row, i) => row.map((v, j) => ({ r: names[i], c: names[j], v })));
svg.append("g").selectAll("rect").data(cells).join("rect")
  .attr("x", (d) => x(d.c)).attr("y", (d) => y(d.r)).attr("width", x.bandwidth()).attr("height", y.bandwidth())
  .attr("fill", (d) => colour(d.v));
svg.append("g").selectAll("text").data(cells).join("text")
  .attr("x", (d) => x(d.c) + x.bandwidth() / 2).attr("y", (d) => y(d.r) + y.bandwidth() / 2 + 8)
  .attr("text-anchor", "middle").attr("font-size", 24).attr("fill", t.ink).text((d) => d.v.toFixed(2));
const style = (g) => { g.selectAll("text").attr("fill", t.inkSoft).attr("font-size", 20); g.selectAll("line,path").remove(); };
svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`).call(d3.axisBottom(x)).call(style);
svg.append("g").attr("transform", `translate(${margin.left},0)`).call(d3.axisLeft(y)).call(style);
svg.append("text").attr("x", width / 2).attr("y", 60).attr("text-anchor", "middle")
  .attr("fill", t.ink).attr("font-size", 28).text("heatmap-square · d3 · plotq");
