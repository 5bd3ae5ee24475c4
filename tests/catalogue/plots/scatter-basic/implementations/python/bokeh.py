""" plotq catalogue
scatter-basic: Basic Scatter Plot
Library: bokeh 3.9.2 | Python 3.11.2
"""

import os

import numpy as np
from bokeh.io import export_png
from bokeh.plotting import figure


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

rng = np.random.default_rng(17)
x = rng.normal(size=250)
y = 0.7 * x + rng.normal(scale=0.5, size=250)

p = figure(width=3200, height=1800, title="scatter-basic · bokeh · plotq", toolbar_location=None,
           min_border=80)
p.scatter(x, y, size=24, fill_color="#E07A5F", fill_alpha=0.7, line_color=FG)
p.background_fill_color = BG
p.border_fill_color = BG
p.title.text_color = FG
p.title.text_font_size = "48pt"
p.axis.major_label_text_font_size = "28pt"
p.axis.major_label_text_color = FG
p.xaxis.axis_label = "x"
p.yaxis.axis_label = "y"
p.axis.axis_label_text_font_size = "32pt"

# export_png drives a browser bare; plotq's figure mode takes the document here instead.
export_png(p, filename=f"plot-{THEME}.png")
