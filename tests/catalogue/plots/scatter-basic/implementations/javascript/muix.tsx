// plotq catalogue
// scatter-basic: Height vs Weight
// Library: muix 7.29.1 | JavaScript (Chromium)
//# anyplot-orientation: landscape
import { ScatterChart } from "@mui/x-charts/ScatterChart";
import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";

const t = window.ANYPLOT_TOKENS;
let seed = 7;
const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 4294967296; };
const points = Array.from({ length: 60 }, (_, id) => {
  const h = 150 + rand() * 45;
  return { id, x: h, y: 0.9 * h - 80 + (rand() - 0.5) * 20 };
});

export default function Chart() {
  const { width, height } = window.ANYPLOT_SIZE;
  return (
    <Box sx={{ width, height, paddingTop: "16px" }}>
      <Typography sx={{ color: t.ink, fontSize: 28, textAlign: "center" }}>scatter-basic · muix · plotq</Typography>
      <ScatterChart
        width={width}
        height={height - 60}
        skipAnimation
        colors={[t.palette[2]]}
        xAxis={[{ label: "height (cm)", min: 145, max: 200 }]}
        yAxis={[{ label: "weight (kg)" }]}
        series={[{ data: points, markerSize: 7, label: "people" }]}
        grid={{ horizontal: true, vertical: true }}
        slotProps={{ legend: { hidden: true } }}
      />
    </Box>
  );
}
