""" plotq catalogue
pie-square: Pie Chart on a Square Canvas
Library: pygal 3.1.3 | Python 3.11.2
"""

import os

import pygal
from pygal.style import Style


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

style = Style(background=BG, plot_background=BG, foreground=FG, foreground_strong=FG,
              foreground_subtle=FG, colors=("#2E86AB", "#E07A5F", "#81B29A", "#F2CC8F"),
              title_font_size=56, legend_font_size=40, value_font_size=36)

chart = pygal.Pie(width=2400, height=2400, style=style, inner_radius=0.35,
                  title="pie-square · pygal · plotq", legend_at_bottom=True)
for name, share in (("rail", 38), ("road", 27), ("air", 20), ("sea", 15)):
    chart.add(name, share)

# 2400 x 2400 PNG through cairosvg, and the SVG beside it.
chart.render_to_png(f"plot-{THEME}.png")
chart.render_to_file(f"plot-{THEME}.svg")
