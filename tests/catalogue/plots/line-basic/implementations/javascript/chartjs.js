// plotq catalogue
// line-basic: Temperature over a Day
// Library: chartjs 4.4.7 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const hours = Array.from({ length: 24 }, (_, h) => `${h}:00`);
const temp = hours.map((_, h) => +(14 + 7 * Math.sin(((h - 9) / 24) * 2 * Math.PI)).toFixed(1));

const canvas = document.createElement("canvas");
document.getElementById("container").appendChild(canvas);
new Chart(canvas, {
  type: "line",
  data: { labels: hours, datasets: [{ label: "°C", data: temp, borderColor: t.palette[0], borderWidth: 4,
                                      pointRadius: 0, tension: 0.3 }] },
  options: {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    plugins: {
      legend: { display: false },
      title: { display: true, text: "line-basic · chartjs · plotq", color: t.ink, font: { size: 28 } },
    },
    scales: {
      x: { ticks: { color: t.inkSoft, font: { size: 16 } }, grid: { color: t.grid } },
      y: { title: { display: true, text: "temperature (°C)", color: t.ink, font: { size: 20 } },
           ticks: { color: t.inkSoft, font: { size: 18 } }, grid: { color: t.grid } },
    },
  },
});
