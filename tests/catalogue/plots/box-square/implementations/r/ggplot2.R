#' plotq catalogue
#' box-square: Box Plot on a Square Canvas
#' Library: ggplot2 3.4.1 | R 4.2.2

library(ggplot2)
library(ragg)
library(tidyr)

# Theme tokens
THEME   <- Sys.getenv("ANYPLOT_THEME", "light")
PAGE_BG <- if (THEME == "light") "#FBFAF5" else "#16161A"
INK     <- if (THEME == "light") "#202024" else "#ECECE6"

set.seed(37)
wide <- data.frame(id = 1:40, `0 mg` = rnorm(40, 3.0, 1.2), `5 mg` = rnorm(40, 4.2, 1.2),
                   `10 mg` = rnorm(40, 5.1, 1.2), check.names = FALSE)
long <- pivot_longer(wide, -id, names_to = "dose", values_to = "response")
long$dose <- factor(long$dose, levels = c("0 mg", "5 mg", "10 mg"))

p <- ggplot(long, aes(dose, response, fill = dose)) +
  geom_boxplot(show.legend = FALSE, color = INK) +
  scale_fill_manual(values = c("#009E73", "#C475FD", "#4467A3")) +
  labs(title = "box-square · r · ggplot2 · plotq") +
  theme_classic(base_size = 12) +
  theme(
    plot.background  = element_rect(fill = PAGE_BG, color = PAGE_BG),
    panel.background = element_rect(fill = PAGE_BG),
    text             = element_text(color = INK),
    axis.line        = element_line(color = INK)
  )

# 6 x 6 in at 400 dpi: 2400 x 2400.
ggsave(sprintf("plot-%s.png", THEME), plot = p, device = ragg::agg_png,
       width = 6, height = 6, units = "in", dpi = 400)
