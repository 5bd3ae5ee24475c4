""" plotq catalogue
bar-basic: Basic Bar Chart
Library: pygal 3.1.3 | Python 3.11.2
"""

import os

import pygal
from pygal.style import Style


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

style = Style(background=BG, plot_background=BG, foreground=FG, foreground_strong=FG,
              foreground_subtle=FG, colors=("#2E86AB", "#E07A5F"), title_font_size=56,
              label_font_size=36, major_label_font_size=36, legend_font_size=36)

# pygal draws SVG at its own width x height; render_to_png converts it with cairosvg: 3200 x 1800.
chart = pygal.Bar(width=3200, height=1800, style=style, title="bar-basic · pygal · plotq",
                  legend_at_bottom=True)
chart.x_labels = ["Q1", "Q2", "Q3", "Q4"]
chart.add("2024", [12, 17, 15, 21])
chart.add("2025", [14, 19, 18, 25])
chart.render_to_png(f"plot-{THEME}.png")

# The interactive page too (pygal's render() is SVG bytes).
with open(f"plot-{THEME}.html", "wb") as f:
    f.write(chart.render())
