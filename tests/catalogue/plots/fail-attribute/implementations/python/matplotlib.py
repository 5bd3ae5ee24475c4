"""Known failure: a typo in an Axes method -> AttributeError."""
import os

import matplotlib.pyplot as plt

THEME = os.getenv("ANYPLOT_THEME", "light")
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.plott([1, 2, 3], [3, 1, 2])
fig.savefig(f"plot-{THEME}.png", dpi=200)
