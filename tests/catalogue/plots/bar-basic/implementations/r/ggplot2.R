#' plotq catalogue
#' bar-basic: Basic Bar Chart
#' Library: ggplot2 3.4.1 | R 4.2.2

library(ggplot2)
library(ragg)

# Theme tokens
THEME   <- Sys.getenv("ANYPLOT_THEME", "light")
PAGE_BG <- if (THEME == "light") "#FBFAF5" else "#16161A"
INK     <- if (THEME == "light") "#202024" else "#ECECE6"
GRID    <- if (THEME == "light") "#D8D6CC" else "#3A3A40"

sales <- data.frame(
  month = factor(month.abb[1:6], levels = month.abb[1:6]),
  units = c(42, 55, 38, 61, 70, 52)
)

p <- ggplot(sales, aes(x = month, y = units)) +
  geom_col(fill = "#009E73", width = 0.7) +
  labs(title = "bar-basic · r · ggplot2 · plotq", x = "Month", y = "Units sold") +
  theme_minimal(base_size = 10) +
  theme(
    plot.background  = element_rect(fill = PAGE_BG, color = PAGE_BG),
    panel.grid.major = element_line(color = GRID, linewidth = 0.3),
    panel.grid.minor = element_blank(),
    text             = element_text(color = INK),
    axis.text        = element_text(color = INK)
  )

# 8 x 4.5 in at 400 dpi: 3200 x 1800.
ggsave(sprintf("plot-%s.png", THEME), plot = p, device = ragg::agg_png,
       width = 8, height = 4.5, units = "in", dpi = 400)
