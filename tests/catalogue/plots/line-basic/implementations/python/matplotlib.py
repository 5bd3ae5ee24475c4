"""Line plot: a damped oscillation, 3200x1800."""
import os

import matplotlib.pyplot as plt
import numpy as np

THEME = os.getenv("ANYPLOT_THEME", "light")
plt.style.use("dark_background" if THEME == "dark" else "default")

t = np.linspace(0, 10, 500)
y = np.exp(-0.3 * t) * np.cos(2 * np.pi * t)

fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.plot(t, y, linewidth=3, label="damped cosine")
ax.set_xlabel("time (s)", fontsize=20)
ax.set_ylabel("amplitude", fontsize=20)
ax.set_title("Damped oscillation", fontsize=24)
ax.legend(fontsize=16)
ax.grid(alpha=0.3)
fig.savefig(f"plot-{THEME}.png", dpi=200)
