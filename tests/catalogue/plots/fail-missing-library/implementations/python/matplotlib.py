"""Known failure: plotnine is not in Debian's archive -> ModuleNotFoundError."""
import os

from plotnine import aes, geom_point, ggplot

THEME = os.getenv("ANYPLOT_THEME", "light")
ggplot() + aes() + geom_point()
