#' plotq catalogue
#' canvas-off: A Plot Saved Off the Canvas
#' Library: ggplot2 3.4.1 | R 4.2.2

library(ggplot2)
library(ragg)

# Theme tokens
THEME   <- Sys.getenv("ANYPLOT_THEME", "light")
PAGE_BG <- if (THEME == "light") "#FBFAF5" else "#16161A"
INK     <- if (THEME == "light") "#202024" else "#ECECE6"

curve_df <- data.frame(t = seq(0, 4 * pi, length.out = 200))
curve_df$value <- sin(curve_df$t) * exp(-curve_df$t / 8)

p <- ggplot(curve_df, aes(t, value)) +
  geom_line(color = "#AE3030", linewidth = 1) +
  labs(title = "canvas-off · r · ggplot2 · plotq") +
  theme_minimal() +
  theme(plot.background = element_rect(fill = PAGE_BG, color = PAGE_BG),
        text = element_text(color = INK), axis.text = element_text(color = INK))

# 7 x 5 in at 150 dpi: 1050 x 750, on neither canvas: a render with canvas "off" (issue 14).
ggsave(sprintf("plot-%s.png", THEME), plot = p, device = ragg::agg_png,
       width = 7, height = 5, units = "in", dpi = 150)
