"""Known failure: draws but never saves -> no output file."""
import os

import matplotlib.pyplot as plt

THEME = os.getenv("ANYPLOT_THEME", "light")
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
ax.plot([1, 2, 3], [3, 1, 2])
