// plotq catalogue
// fail-js-error: a snippet that throws a TypeError on line 11
// Library: chartjs 4.4.7 | JavaScript (Chromium)
//# anyplot-orientation: landscape

const t = window.ANYPLOT_TOKENS;
const canvas = document.createElement("canvas");
document.getElementById("container").appendChild(canvas);
const options = { animation: false, responsive: true, maintainAspectRatio: false };
const labels = null;
options.scales = { x: { ticks: { color: t.inkSoft } }, categories: labels.map((l) => l.trim()) };
new Chart(canvas, { type: "bar", data: { labels: ["a"], datasets: [{ data: [1] }] }, options });
