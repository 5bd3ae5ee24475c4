""" plotq catalogue
bar-basic: Basic Bar Chart
Library: altair 6.3.0 | Python 3.11.2
"""

import importlib
import os
import sys

from PIL import Image


# The catalogue's self-import guard: this file is named altair.py, so its folder leaves sys.path
# and the packages are imported by name afterwards (plotq must allow both).
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
alt = importlib.import_module("altair")
pd = importlib.import_module("pandas")

THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

frame = pd.DataFrame({"language": ["C", "C++", "Go", "Python", "Rust", "Zig"],
                      "repos": [31, 44, 27, 58, 36, 9]})

chart = (
    alt.Chart(frame)
    .mark_bar(color="#2E86AB")
    .encode(x=alt.X("language:N", sort="-y", title=None), y=alt.Y("repos:Q", title="repositories"))
    .properties(width=680, height=340, background=BG,
                title=alt.Title("bar-basic · altair · plotq", color=FG, fontSize=16))
    .configure_axis(labelColor=FG, titleColor=FG, labelFontSize=12, titleFontSize=13)
    .configure_view(strokeWidth=0)
)

# vl-convert at scale 4 gives the chart's own size (plot area + axes) times 4, a little under the
# canvas: read the PNG back with PIL and pad it to exactly 3200 x 1800, then write the page too.
W, H = 3200, 1800
chart.save(f"plot-{THEME}.png", scale_factor=4.0)
img = Image.open(f"plot-{THEME}.png").convert("RGB")
if img.size[0] > W or img.size[1] > H:
    raise SystemExit(f"vl-convert drew {img.size[0]}x{img.size[1]}, over {W}x{H}")
if img.size != (W, H):
    canvas = Image.new("RGB", (W, H), BG)
    canvas.paste(img, ((W - img.size[0]) // 2, (H - img.size[1]) // 2))
    canvas.save(f"plot-{THEME}.png")
chart.save(f"plot-{THEME}.html")
