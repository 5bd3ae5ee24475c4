// plotq catalogue
// bar-basic: Orders per Month
// Library: muix 7.29.1 | JavaScript (Chromium)
//# anyplot-orientation: landscape
import { BarChart } from "@mui/x-charts/BarChart";
import Box from "@mui/material/Box";
import Typography from "@mui/material/Typography";

const t = window.ANYPLOT_TOKENS;
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"];
const orders = [42, 55, 38, 67, 71, 49];

export default function Chart() {
  const { width, height } = window.ANYPLOT_SIZE;
  return (
    <Box sx={{ width, height, paddingTop: "16px" }}>
      <Typography sx={{ color: t.ink, fontSize: 28, textAlign: "center" }}>bar-basic · muix · plotq</Typography>
      <BarChart
        width={width}
        height={height - 60}
        skipAnimation
        colors={[t.palette[0]]}
        xAxis={[{ scaleType: "band", data: months }]}
        yAxis={[{ label: "orders" }]}
        series={[{ data: orders, label: "orders" }]}
        grid={{ horizontal: true }}
        slotProps={{ legend: { hidden: true } }}
      />
    </Box>
  );
}
