"""Off canvas: an 800x600 PNG, a render whose canvas is "off" (issue 14), not a failure: plotq
answers it with its measured size and the sweep reports the drift; the catalogue's own review gate
judges it."""
import os

import matplotlib.pyplot as plt

THEME = os.getenv("ANYPLOT_THEME", "light")
fig, ax = plt.subplots(figsize=(8, 6), dpi=100)
ax.plot([1, 2, 3], [3, 1, 2])
fig.savefig(f"plot-{THEME}.png", dpi=100)
