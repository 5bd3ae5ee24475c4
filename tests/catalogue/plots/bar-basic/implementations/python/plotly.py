""" plotq catalogue
bar-basic: Basic Bar Chart
Library: plotly 7.1.0 | Python 3.11.2
"""

import os
import sys


# The catalogue's self-import guard: this file is named plotly.py, so its folder leaves sys.path
# before `import plotly` (plotq must allow the rebuild).
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

import plotly.graph_objects as go  # noqa: E402


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

regions = ["north", "east", "south", "west", "centre"]
sales = [42, 35, 51, 28, 46]

fig = go.Figure(go.Bar(x=regions, y=sales, marker={"color": "#2E86AB"}, text=sales, textposition="outside"))
fig.update_layout(
    title={"text": "bar-basic · plotly · plotq", "x": 0.5},
    paper_bgcolor=BG,
    plot_bgcolor=BG,
    font={"color": FG, "size": 14},
    yaxis={"title": "units sold", "gridcolor": "rgba(128,128,128,0.3)"},
    margin={"l": 70, "r": 30, "t": 70, "b": 50},
)

# 800 x 450 at scale 4: 3200 x 1800. Then the interactive page beside it, as 324 of the
# catalogue's 324 plotly files do (a harmless write in the work dir, never a refusal).
fig.write_image(f"plot-{THEME}.png", width=800, height=450, scale=4)
fig.write_html(f"plot-{THEME}.html", include_plotlyjs="cdn", config={"displaylogo": False})
