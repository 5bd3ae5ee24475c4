#' plotq catalogue
#' fail-r-error: A Plot That Stops With an Error
#' Library: ggplot2 3.4.1 | R 4.2.2

library(ggplot2)
library(ragg)

THEME <- Sys.getenv("ANYPLOT_THEME", "light")

check_rows <- function(df) {
  if (nrow(df) < 3) stop("need at least three rows, got ", nrow(df))
  df
}

# Two rows only: check_rows() stops (a simpleError at line 11).
data <- check_rows(data.frame(x = 1:2, y = c(3, 4)))

p <- ggplot(data, aes(x, y)) + geom_line()
ggsave(sprintf("plot-%s.png", THEME), plot = p, device = ragg::agg_png,
       width = 8, height = 4.5, units = "in", dpi = 400)
