#' plotq catalogue
#' scatter-basic: Basic Scatter Plot
#' Library: ggplot2 3.4.1 | R 4.2.2

library(ggplot2)
library(ragg)
library(dplyr)

# Theme tokens
THEME   <- Sys.getenv("ANYPLOT_THEME", "light")
PAGE_BG <- if (THEME == "light") "#FBFAF5" else "#16161A"
INK     <- if (THEME == "light") "#202024" else "#ECECE6"

set.seed(7)
points <- tibble::tibble(x = runif(80, 0, 10)) %>%
  mutate(y = 1.5 * x + rnorm(n(), sd = 2), group = if_else(x > 5, "high", "low"))

p <- ggplot(points, aes(x, y, color = group)) +
  geom_point(size = 2.5, alpha = 0.85) +
  scale_color_manual(values = c(high = "#4467A3", low = "#BD8233")) +
  labs(title = "scatter-basic · r · ggplot2 · plotq", x = "Dose", y = "Response") +
  theme_minimal(base_size = 10) +
  theme(
    plot.background = element_rect(fill = PAGE_BG, color = PAGE_BG),
    text            = element_text(color = INK),
    axis.text       = element_text(color = INK)
  )

# 8 x 4.5 in at 400 dpi: 3200 x 1800.
ggsave(filename = sprintf("plot-%s.png", THEME), plot = p, device = ragg::agg_png,
       width = 8, height = 4.5, units = "in", dpi = 400)
