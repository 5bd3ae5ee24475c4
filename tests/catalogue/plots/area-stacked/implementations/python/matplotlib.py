""" plotq catalogue
area-stacked: Stacked Area Chart
Library: matplotlib 3.11.2 | Python 3.11.2
"""

import os
import sys

import matplotlib.pyplot as plt
import numpy as np


# The catalogue's self-import guard: drop the file's own folder from sys.path (a file named
# matplotlib.py would shadow the package) and save next to the file. plotq must allow both.
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"
SERIES = ["#2E86AB", "#E07A5F", "#81B29A"]

years = np.arange(2010, 2025)
rng = np.random.default_rng(21)
parts = np.cumsum(rng.uniform(0.5, 2.0, size=(3, years.size)), axis=1)

# 8 x 4.5 in at 400 dpi: 3200 x 1800.
fig, ax = plt.subplots(figsize=(8, 4.5), dpi=400, facecolor=BG)
ax.set_facecolor(BG)
ax.stackplot(years, parts, labels=["wind", "solar", "hydro"], colors=SERIES, alpha=0.9)
ax.set_title("area-stacked · matplotlib · plotq", color=FG, fontsize=12)
ax.set_xlabel("year", color=FG)
ax.set_ylabel("output (TWh)", color=FG)
ax.tick_params(colors=FG)
for spine in ax.spines.values():
    spine.set_color(FG)
ax.legend(loc="upper left", facecolor=BG, edgecolor=FG, labelcolor=FG)
plt.tight_layout()
plt.savefig(os.path.join(_here, f"plot-{THEME}.png"), dpi=400, facecolor=BG)
