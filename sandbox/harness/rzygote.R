# rzygote.R: the R zygote (sandbox mode "r"; docs/sandbox.md "R jobs", "Warm R starts").
#
# Started by the host (sandbox/zygote.cpp) exactly as zygote.py is: pid 1 of its own pid
# namespace, root of its own user namespace (no privilege outside), in its own mount/net/ipc/uts
# namespaces, its control socket on fd 3:
#
#   R --vanilla --no-echo --no-readline -f rzygote.R --args --ctl-fd 3 --lib libplotq_confine.so
#     --zygote-lib plotq_r_zygote.so --arm-lib plotq_r_arm.so
#
# 1. loads the namespaces every catalogue R file uses (loaded, not attached: search() stays a cold
#    job's, and library(ggplot2) in the plot attaches what is loaded already);
# 2. draws one small ggplot2 through ragg and throws it away (the fonts, the drawing code paths);
# 3. promotes everything to R's oldest GC generation (a job's young collections then never walk,
#    and so never copy, the zygote's objects);
# 4. hands control to plotq_r_zygote.so (sandbox/r_zygote.cpp), which serves the zygote protocol
#    and returns only in a job's child: confined, its descriptors, environment, temp dir and the
#    cold job's command line in place. The child then evaluates rharness.R, the cold job's entry
#    (it arms the exec filter before it reads plot.R), which always ends with quit().
# Nothing here leaves a name in the global environment, and the zygote never runs job code.
local({
  t0 <- proc.time()[["elapsed"]]
  args <- commandArgs(trailingOnly = TRUE)
  opt <- function(name) {
    i <- match(name, args)
    if (is.na(i) || i >= length(args)) stop("rzygote.R: missing ", name)
    args[[i + 1L]]
  }
  all <- commandArgs(FALSE)
  here <- dirname(all[[match("-f", all) + 1L]])

  for (p in c("ggplot2", "ragg", "dplyr", "scales", "tidyr", "tibble")) loadNamespace(p)
  png <- tempfile(fileext = ".png")
  ragg::agg_png(png, width = 4, height = 3, units = "in", res = 100)
  print(ggplot2::ggplot(data.frame(x = c(1, 2, 3), y = c(2, 1, 3)), ggplot2::aes(x, y)) +
          ggplot2::geom_point() + ggplot2::geom_line() + ggplot2::labs(title = "warm-up") +
          ggplot2::theme_minimal())
  grDevices::dev.off()
  unlink(png)
  grDevices::graphics.off()
  if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) rm(".Random.seed", envir = globalenv())
  for (i in 1:3) invisible(gc(full = TRUE))

  # The cold job's command line up to its own options (attempt.cpp launch_cold).
  entry <- c(all[[1L]], "--vanilla", "--no-echo", "--no-readline", "-f", file.path(here, "rharness.R"),
             "--args", "--report-fd", "3", "--lib", opt("--arm-lib"))
  dyn.load(opt("--zygote-lib"))
  served <- .C("plotq_r_zygote_serve", as.integer(opt("--ctl-fd")), opt("--lib"), entry, length(entry),
               as.double(proc.time()[["elapsed"]] - t0), status = integer(1L))
  if (served$status != 0L) quit("no", 1L, FALSE)

  # A job's child from here on. What R sets at its start (R_HOME/etc/Renviron: R_PAPERSIZE,
  # R_LIBS_SITE, ...; then base's Rprofile expands R_LIBS_SITE and R_LIBS_USER) is set again over
  # the job's environment, as a cold job's R sets it; the global environment is a cold job's
  # (empty); then the job.
  readRenviron(file.path(R.home("etc"), "Renviron"))
  expand <- get(".expand_R_libs_env_var", envir = baseenv())
  Sys.setenv(R_LIBS_SITE = expand(Sys.getenv("R_LIBS_SITE")), R_LIBS_USER = expand(Sys.getenv("R_LIBS_USER")))
  rm(list = ls(globalenv(), all.names = TRUE), envir = globalenv())
  for (e in parse(file.path(here, "rharness.R"), keep.source = FALSE)) eval(e, globalenv())
  quit("no", 35L, FALSE)  # rharness.R always quits itself: internal_error if it did not
})
