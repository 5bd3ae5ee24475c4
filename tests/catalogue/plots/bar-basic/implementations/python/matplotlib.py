"""Bar chart: monthly totals, 3200x1800."""
import os

import matplotlib.pyplot as plt
import numpy as np

THEME = os.getenv("ANYPLOT_THEME", "light")
plt.style.use("dark_background" if THEME == "dark" else "default")

months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun"]
rng = np.random.default_rng(7)
values = rng.integers(20, 80, size=len(months))

fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.bar(months, values, color="#4C72B0")
ax.set_ylabel("orders", fontsize=20)
ax.set_title("Orders per month", fontsize=24)
ax.tick_params(labelsize=16)
fig.savefig(f"plot-{THEME}.png", dpi=200)
