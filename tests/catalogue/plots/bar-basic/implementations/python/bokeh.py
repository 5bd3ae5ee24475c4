""" plotq catalogue
bar-basic: Basic Bar Chart
Library: bokeh 3.9.2 | Python 3.11.2
"""

import os
import sys
from pathlib import Path


# The catalogue's self-import guard: this file is named bokeh.py (plotq must allow the rebuild).
_here = os.path.dirname(os.path.abspath(__file__))
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != _here]

from bokeh.io import output_file, save  # noqa: E402
from bokeh.models import ColumnDataSource  # noqa: E402
from bokeh.plotting import figure  # noqa: E402
from PIL import Image  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

fruits = ["apples", "pears", "plums", "figs", "limes"]
counts = [34, 21, 27, 12, 18]
source = ColumnDataSource(data={"fruit": fruits, "count": counts})

# 3200 x 1800 at device scale 1, no toolbar (it would add to the height).
p = figure(x_range=fruits, width=3200, height=1800, title="bar-basic · bokeh · plotq",
           toolbar_location=None, min_border=80)
p.vbar(x="fruit", top="count", width=0.7, source=source, fill_color="#2E86AB", line_color=None)
p.background_fill_color = BG
p.border_fill_color = BG
p.title.text_color = FG
p.title.text_font_size = "48pt"
p.axis.major_label_text_font_size = "32pt"
p.axis.major_label_text_color = FG
p.y_range.start = 0

# The catalogue's dominant save: the page with save(p), then a screenshot of it by Selenium and
# headless Chrome, padded to the canvas with PIL. plotq takes the document at save(); the Selenium
# calls must neither start a browser in the sandbox nor fail the file.
output_file(f"plot-{THEME}.html")
save(p)

W, H = 3200, 1800
opts = Options()
for arg in ("--headless=new", "--no-sandbox", "--hide-scrollbars", f"--window-size={W},{H}"):
    opts.add_argument(arg)
driver = webdriver.Chrome(options=opts)
driver.set_window_size(W, H)
driver.get(f"file://{Path(f'plot-{THEME}.html').resolve()}")
driver.save_screenshot(f"plot-{THEME}.png")
driver.quit()

img = Image.open(f"plot-{THEME}.png").convert("RGB")
if img.size != (W, H):
    canvas = Image.new("RGB", (W, H), BG)
    canvas.paste(img, (0, 0))
    canvas.save(f"plot-{THEME}.png")
