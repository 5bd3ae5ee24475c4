// plotq catalogue
// heatmap-square: Correlation Heatmap on a Square Canvas
// Library: muix 7.29.1 | JavaScript (Chromium)
//# anyplot-orientation: square
import { ChartContainer } from "@mui/x-charts/ChartContainer";
import { ChartsXAxis } from "@mui/x-charts/ChartsXAxis";
import { ChartsYAxis } from "@mui/x-charts/ChartsYAxis";
import { useXScale, useYScale } from "@mui/x-charts/hooks";
import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";

const t = window.ANYPLOT_TOKENS;
const names = ["speed", "load", "temp", "noise", "wear"];
const corr = [
  [1.0, 0.62, -0.08, 0.15, 0.05],
  [0.62, 1.0, 0.02, 0.21, -0.11],
  [-0.08, 0.02, 1.0, -0.35, 0.48],
  [0.15, 0.21, -0.35, 1.0, -0.02],
  [0.05, -0.11, 0.48, -0.02, 1.0],
];
const rgb = (c: string) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
const mix = (a: string, b: string, f: number) => `rgb(${rgb(a).map((v, i) => Math.round(v + (rgb(b)[i] - v) * f)).join(",")})`;
const colour = (v: number) => (v < 0 ? mix(t.div[1], t.div[0], -v) : mix(t.div[1], t.div[2], v));

// The community package has no heatmap: the cells are drawn on the chart's own band scales.
function Cells() {
  const x = useXScale() as any;
  const y = useYScale() as any;
  return (
    <g>
      {corr.flatMap((row, i) => row.map((v, j) => (
        <g key={`${i}-${j}`}>
          <rect x={x(names[j])} y={y(names[i])} width={x.bandwidth()} height={y.bandwidth()} fill={colour(v)} />
          <text x={x(names[j]) + x.bandwidth() / 2} y={y(names[i]) + y.bandwidth() / 2 + 8} textAnchor="middle"
                fontSize={24} fill={t.ink}>{v.toFixed(2)}</text>
        </g>
      )))}
    </g>
  );
}

export default function Chart() {
  const { width, height } = window.ANYPLOT_SIZE;
  return (
    <Box sx={{ width, height, paddingTop: "24px" }}>
      <Typography sx={{ color: t.ink, fontSize: 28, textAlign: "center" }}>heatmap-square · muix · plotq</Typography>
      <ChartContainer
        width={width}
        height={height - 70}
        skipAnimation
        margin={{ top: 40, right: 60, bottom: 80, left: 120 }}
        series={[{ type: "scatter", data: [] }]}
        xAxis={[{ id: "x", scaleType: "band", data: names, categoryGapRatio: 0.03 }]}
        yAxis={[{ id: "y", scaleType: "band", data: names, categoryGapRatio: 0.03 }]}
      >
        <Cells />
        <ChartsXAxis axisId="x" disableLine disableTicks tickLabelStyle={{ fontSize: 20, fill: t.inkSoft }} />
        <ChartsYAxis axisId="y" disableLine disableTicks tickLabelStyle={{ fontSize: 20, fill: t.inkSoft }} />
      </ChartContainer>
    </Box>
  );
}
