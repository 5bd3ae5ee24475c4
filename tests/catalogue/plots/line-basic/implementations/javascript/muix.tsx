// plotq catalogue
// line-basic: Temperature over a Day
// Library: muix 7.29.1 | JavaScript (Chromium)
//# anyplot-orientation: landscape
import { LineChart } from "@mui/x-charts/LineChart";
import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";

const t = window.ANYPLOT_TOKENS;
const hours = Array.from({ length: 24 }, (_, h) => h);
const temp = hours.map((h) => 14 + 7 * Math.sin(((h - 9) / 24) * 2 * Math.PI));

export default function Chart() {
  const { width, height } = window.ANYPLOT_SIZE;
  return (
    <Box sx={{ width, height, paddingTop: "16px" }}>
      <Typography sx={{ color: t.ink, fontSize: 28, textAlign: "center" }}>line-basic · muix · plotq</Typography>
      <LineChart
        width={width}
        height={height - 60}
        skipAnimation
        colors={[t.palette[0]]}
        xAxis={[{ data: hours, label: "hour" }]}
        yAxis={[{ label: "temperature (°C)", min: 5 }]}
        series={[{ data: temp, showMark: false, curve: "monotoneX", label: "°C" }]}
        grid={{ horizontal: true }}
        slotProps={{ legend: { hidden: true } }}
      />
    </Box>
  );
}
