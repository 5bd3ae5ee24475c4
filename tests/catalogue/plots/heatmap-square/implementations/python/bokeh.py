""" plotq catalogue
heatmap-square: Heatmap on a Square Canvas
Library: bokeh 3.9.2 | Python 3.11.2
"""

import os

import numpy as np
from bokeh.io import output_file, save
from bokeh.models import ColumnDataSource, LinearColorMapper
from bokeh.plotting import figure
from bokeh.transform import transform
from selenium import webdriver
from selenium.webdriver.chrome.options import Options


THEME = os.getenv("ANYPLOT_THEME", "light")
BG = "#FBFAF5" if THEME == "light" else "#16161A"
FG = "#202024" if THEME == "light" else "#ECECE6"

days = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
hours = [f"{h:02d}h" for h in range(8, 20, 2)]
rng = np.random.default_rng(23)
grid = rng.gamma(2.0, 10.0, size=(len(days), len(hours)))
source = ColumnDataSource(data={
    "day": np.repeat(days, len(hours)).tolist(),
    "hour": hours * len(days),
    "visits": grid.ravel().tolist(),
})
mapper = LinearColorMapper(palette="Viridis256", low=float(grid.min()), high=float(grid.max()))

# 2400 x 2400, no toolbar.
p = figure(x_range=hours, y_range=list(reversed(days)), width=2400, height=2400,
           title="heatmap-square · bokeh · plotq", toolbar_location=None, min_border=80)
p.rect(x="hour", y="day", width=1, height=1, source=source, fill_color=transform("visits", mapper),
       line_color=BG)
p.background_fill_color = BG
p.border_fill_color = BG
p.title.text_color = FG
p.title.text_font_size = "44pt"
p.axis.major_label_text_font_size = "30pt"
p.axis.major_label_text_color = FG

output_file(f"plot-{THEME}.html", title="heatmap-square")
save(p)

# A screenshot through Selenium with the page size forced over CDP, as many catalogue files do.
opts = Options()
opts.add_argument("--headless=new")
driver = webdriver.Chrome(options=opts)
driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                       {"width": 2400, "height": 2400, "deviceScaleFactor": 1, "mobile": False})
driver.get("file://" + os.path.abspath(f"plot-{THEME}.html"))
driver.save_screenshot(f"plot-{THEME}.png")
driver.quit()
