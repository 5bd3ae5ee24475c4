"""Known failure: an 800x600 canvas -> the size check names the measured size."""
import os

import matplotlib.pyplot as plt

THEME = os.getenv("ANYPLOT_THEME", "light")
fig, ax = plt.subplots(figsize=(8, 6), dpi=100)
ax.plot([1, 2, 3], [3, 1, 2])
fig.savefig(f"plot-{THEME}.png", dpi=100)
