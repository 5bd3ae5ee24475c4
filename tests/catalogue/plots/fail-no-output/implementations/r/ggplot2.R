#' plotq catalogue
#' fail-no-output: A Plot That Saves Nothing
#' Library: ggplot2 3.4.1 | R 4.2.2

library(ggplot2)

THEME <- Sys.getenv("ANYPLOT_THEME", "light")

# The plot is built and printed to no device file: ggsave is never called, so no plot-<theme>.png.
p <- ggplot(mtcars, aes(wt, mpg)) + geom_point()
invisible(ggplot_build(p))
