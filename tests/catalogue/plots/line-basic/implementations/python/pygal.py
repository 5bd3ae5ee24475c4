""" plotq catalogue
line-basic: Basic Line Chart
Library: pygal 3.1.3 | Python 3.11.2
"""

import math
import os

import pygal
from PIL import Image
from pygal.style import Style


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

style = Style(background=BG, plot_background=BG, foreground=FG, foreground_strong=FG,
              foreground_subtle=FG, colors=("#2E86AB", "#E07A5F"), title_font_size=56,
              label_font_size=32, major_label_font_size=32, legend_font_size=36, stroke_width=6)

chart = pygal.Line(width=3200, height=1800, style=style, title="line-basic · pygal · plotq",
                   show_dots=False, x_label_rotation=0, show_minor_x_labels=False)
days = list(range(1, 31))
chart.x_labels = [str(d) for d in days]
chart.x_labels_major = [str(d) for d in days if d % 5 == 0]
chart.add("inbound", [40 + 10 * math.sin(d / 3) for d in days])
chart.add("outbound", [35 + 8 * math.cos(d / 4) for d in days])
chart.render_to_png(f"plot-{THEME}.png")

# Read the PNG back with PIL and save it again with a dpi stamp, as a few catalogue files do.
img = Image.open(f"plot-{THEME}.png")
img.save(f"plot-{THEME}.png", dpi=(300, 300))
