"""Known failure: a column that does not exist -> ValueError from seaborn."""
import os

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns

THEME = os.getenv("ANYPLOT_THEME", "light")
frame = pd.DataFrame({"x": [1, 2, 3], "y": [2, 4, 6]})
fig, ax = plt.subplots(figsize=(16, 9), dpi=200)
sns.lineplot(data=frame, x="x", y="missing", ax=ax)
fig.savefig(f"plot-{THEME}.png", dpi=200)
