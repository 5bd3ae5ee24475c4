// plotq catalogue
// scatter-basic: Height vs Weight
// Library: chartjs 4.4.7 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
// Small deterministic data: a linear congruential generator, seed 7.
let seed = 7;
const rand = () => { seed = (seed * 1664525 + 1013904223) >>> 0; return seed / 4294967296; };
const points = Array.from({ length: 60 }, () => {
  const h = 150 + rand() * 45;
  return { x: +h.toFixed(1), y: +(0.9 * h - 80 + (rand() - 0.5) * 20).toFixed(1) };
});

const canvas = document.createElement("canvas");
document.getElementById("container").appendChild(canvas);
new Chart(canvas, {
  type: "scatter",
  data: { datasets: [{ label: "people", data: points, backgroundColor: t.palette[2], pointRadius: 7 }] },
  options: {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    plugins: {
      legend: { display: false },
      title: { display: true, text: "scatter-basic · chartjs · plotq", color: t.ink, font: { size: 28 } },
    },
    scales: {
      x: { title: { display: true, text: "height (cm)", color: t.ink, font: { size: 20 } },
           ticks: { color: t.inkSoft, font: { size: 18 } }, grid: { color: t.grid } },
      y: { title: { display: true, text: "weight (kg)", color: t.ink, font: { size: 20 } },
           ticks: { color: t.inkSoft, font: { size: 18 } }, grid: { color: t.grid } },
    },
  },
});
