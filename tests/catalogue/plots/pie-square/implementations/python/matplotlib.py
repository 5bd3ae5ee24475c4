"""Pie chart on a square canvas, 2400x2400."""
import os

import matplotlib.pyplot as plt

THEME = os.getenv("ANYPLOT_THEME", "light")
plt.style.use("dark_background" if THEME == "dark" else "default")

shares = [38, 27, 20, 15]
labels = ["rail", "road", "air", "sea"]

fig, ax = plt.subplots(figsize=(12, 12), dpi=200)
ax.pie(shares, labels=labels, autopct="%1.0f%%", textprops={"fontsize": 20})
ax.set_title("Freight by mode", fontsize=28)
fig.savefig(f"plot-{THEME}.png", dpi=200)
