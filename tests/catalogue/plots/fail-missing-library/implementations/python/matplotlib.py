"""Known failure: pyecharts is not in the sandbox runtime (runtime/requirements.lock) ->
ModuleNotFoundError."""
import os

from pyecharts.charts import Bar

THEME = os.getenv("ANYPLOT_THEME", "light")
Bar().render(f"plot-{THEME}.png")
