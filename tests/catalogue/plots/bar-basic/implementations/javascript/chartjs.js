// plotq catalogue
// bar-basic: Orders per Month
// Library: chartjs 4.4.7 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"];
const orders = [42, 55, 38, 67, 71, 49];

// The canvas fills #container; the page background shows through it.
const canvas = document.createElement("canvas");
document.getElementById("container").appendChild(canvas);

new Chart(canvas, {
  type: "bar",
  data: { labels: months, datasets: [{ label: "orders", data: orders, backgroundColor: t.palette[0] }] },
  options: {
    animation: false,
    responsive: true,
    maintainAspectRatio: false,
    plugins: {
      legend: { display: false },
      title: { display: true, text: "bar-basic · chartjs · plotq", color: t.ink, font: { size: 28 } },
    },
    scales: {
      x: { ticks: { color: t.inkSoft, font: { size: 18 } }, grid: { display: false } },
      y: { ticks: { color: t.inkSoft, font: { size: 18 } }, grid: { color: t.grid },
           title: { display: true, text: "orders", color: t.ink, font: { size: 20 } } },
    },
  },
});
