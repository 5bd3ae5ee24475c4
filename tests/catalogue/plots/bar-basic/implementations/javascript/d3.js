// plotq catalogue
// bar-basic: Orders per Month
// Library: d3 7.9.0 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const { width, height } = window.ANYPLOT_SIZE;
const margin = { top: 90, right: 50, bottom: 80, left: 100 };
const data = [["Jan", 42], ["Feb", 55], ["Mar", 38], ["Apr", 67], ["May", 71], ["Jun", 49]];

const svg = d3.select("#container").append("svg").attr("width", width).attr("height", height);
const x = d3.scaleBand().domain(data.map((d) => d[0])).range([margin.left, width - margin.right]).padding(0.25);
const y = d3.scaleLinear().domain([0, 80]).range([height - margin.bottom, margin.top]);

svg.append("g").attr("transform", `translate(0,${height - margin.bottom})`).call(d3.axisBottom(x))
  .call((g) => g.selectAll("text").attr("fill", t.inkSoft).attr("font-size", 18))
  .call((g) => g.selectAll("line,path").attr("stroke", t.inkSoft));
svg.append("g").attr("transform", `translate(${margin.left},0)`).call(d3.axisLeft(y).ticks(8))
  .call((g) => g.selectAll("text").attr("fill", t.inkSoft).attr("font-size", 18))
  .call((g) => g.selectAll("line,path").attr("stroke", t.inkSoft));
svg.append("g").selectAll("rect").data(data).join("rect")
  .attr("x", (d) => x(d[0])).attr("y", (d) => y(d[1]))
  .attr("width", x.bandwidth()).attr("height", (d) => y(0) - y(d[1]))
  .attr("fill", t.palette[0]);
svg.append("text").attr("x", width / 2).attr("y", 50).attr("text-anchor", "middle")
  .attr("fill", t.ink).attr("font-size", 28).text("bar-basic · d3 · plotq");
