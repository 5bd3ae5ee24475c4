# rharness.R: the entry and harness of an R job (sandbox mode "r"; docs/sandbox.md, "R jobs").
#
# Cold path: R --vanilla --no-echo --no-readline -f rharness.R --args --report-fd 3
#            --lib <dir>/plotq_r_arm.so [--filter-optional] -- plot.R
# after confine_job() (the same kernel layers as a Python job). Steps, none of them user code:
# 1. arms the exec filter through plotq_r_arm.so (sandbox/r_exec_arm.c: execve/execveat -> EPERM
#    on every thread, non-dumpable) and writes the report line (`armed tsync` / `refused <state>`),
#    exiting 3 when it cannot arm and the filter is required: the entry protocol of entry.py;
# 2. prints the harness start line; reads plot.R (a regular file under the cap, UTF-8) and parses
#    it with its source references;
# 3. installs the R-side guard unless PLOTQ_R_GUARD is "0": early, precise refusals of system,
#    pipe, url, download.file, sockets, dyn.load, Sys.setenv. An optional layer only: R's functions
#    are all reachable and rebindable by the plot, so nothing here is the boundary; the kernel
#    layers are, and every escape test also runs with the guard off;
# 4. evaluates the plot's expressions one by one in the global environment, printing visible
#    values (as Rscript does), the work dir its cwd and ANYPLOT_THEME set by the host;
# 5. writes result.json, the plot mode record (sandbox/harness/exits.py PLOT_REASONS: 0 ok,
#    30 plot_error with the condition's class and the file's line, 31 guard_refused, 32 plot_exit,
#    33 plot_missing, 34 source_invalid, 35 internal_error), and quits with that code.
# The record is the job's own claim: the host believes it only when it agrees with the exit status
# (runs/render_interpret.cpp), and never reads anything but the capped files it names.
# The harness's own environment has base as its parent, not the global environment: a function the
# plot defines globally (a `finish`, a `sprintf`) never shadows what the harness calls after it.
local(envir = new.env(parent = baseenv()), {
  .quit <- base::quit  # bound before the plot runs: its body is .Internal(quit(...))
  work_dir <- getwd()  # the job's work dir: the record goes there even if the plot setwd()s away
  args <- commandArgs(trailingOnly = TRUE)
  opt <- function(name) {
    i <- match(name, args)
    if (is.na(i) || i >= length(args)) NULL else args[[i + 1L]]
  }
  report_fd <- as.integer(opt("--report-fd"))
  lib <- opt("--lib")
  required <- !("--filter-optional" %in% args)
  # After "--": the job's argv (render_job_spec: --plot plot.R); the file is its last word.
  dash <- match("--", args)
  rest <- if (is.na(dash)) character() else args[-seq_len(dash)]
  rest <- rest[!startsWith(rest, "--")]
  plot_file <- if (length(rest)) rest[[length(rest)]] else "plot.R"

  # 1. The exec filter, before anything of the plot is read.
  if (length(report_fd) != 1L || is.na(report_fd) || is.null(lib)) .quit("no", 64L, FALSE)
  loaded <- tryCatch({ dyn.load(lib); TRUE }, error = function(e) FALSE)
  if (!loaded) {
    con <- file(sprintf("/proc/self/fd/%d", report_fd), open = "w")
    cat("refused library\n", file = con)
    close(con)
    if (required) .quit("no", 3L, FALSE)
  } else {
    .C("plotq_r_arm", report_fd, as.integer(required), armed = integer(1L))
  }

  # 2. The harness start line (sandbox/verdict.cpp: a harness mode without it failed to start).
  cat('HARNESS {"event": "start"}\n')
  flush(stdout())

  theme <- Sys.getenv("ANYPLOT_THEME", "")
  output <- sprintf("plot-%s.png", theme)
  max_chars <- 131072L        # the render route's source cap (plotmode.py MAX_PLOT_CHARS)
  max_bytes <- 4L * max_chars
  reasons <- c("0" = "ok", "30" = "plot_error", "31" = "guard_refused", "32" = "plot_exit",
               "33" = "plot_missing", "34" = "source_invalid", "35" = "internal_error")
  jstr <- function(s) {
    if (is.null(s) || length(s) != 1L || is.na(s)) return("null")
    s <- enc2utf8(as.character(s))
    s <- gsub("\\\\", "\\\\\\\\", s)
    s <- gsub('"', '\\\\"', s)
    s <- gsub("[[:cntrl:]]", " ", s)
    paste0('"', s, '"')
  }
  jint <- function(n) if (is.null(n) || length(n) != 1L || is.na(n)) "null" else as.character(as.integer(n))
  finish <- function(code, error = NULL, refusal = NULL, measured = NULL, limit = NULL) {
    obj <- function(x) if (is.null(x)) "null" else
      sprintf('{"%s": %s, "line": %s}', names(x)[1L], jstr(x[[1L]]), jint(x[[2L]]))
    rec <- sprintf(paste0('{"mode": "r", "theme": %s, "output": %s, "exit_code": %d, "reason": %s, ',
                          '"error": %s, "refusal": %s, "exit_request": null, "measured": %s, "limit": %s}'),
                   jstr(theme), jstr(output), code, jstr(reasons[[as.character(code)]]),
                   obj(error), obj(refusal), jint(measured), jint(limit))
    record <- file.path(work_dir, "result.json")
    suppressWarnings(file.remove(record))  # a link the plot left there is removed, not followed
    writeLines(rec, record, useBytes = TRUE)
    flush(stdout())
    flush(stderr())
    .quit("no", code, FALSE)
  }

  # 3. The source: a regular file (not a link), under the cap, UTF-8.
  info <- file.info(plot_file, extra_cols = FALSE)
  if (is.na(info$size) || info$isdir || nzchar(Sys.readlink(plot_file))) finish(33L)
  if (info$size > max_bytes) finish(34L, measured = info$size, limit = max_bytes)
  bytes <- readBin(plot_file, "raw", n = max_bytes + 1L)
  text <- rawToChar(bytes)
  Encoding(text) <- "UTF-8"
  if (!validUTF8(text)) finish(34L)
  if (nchar(text, type = "chars") > max_chars) finish(34L, measured = nchar(text), limit = max_chars)
  # Parsed as lines (as parse(file) reads them), so that a parse error names the line Rscript would.
  lines <- strsplit(text, "\n", fixed = TRUE)[[1L]]
  srcfile <- srcfilecopy(plot_file, lines, isFile = TRUE)
  exprs <- tryCatch(parse(text = lines, keep.source = TRUE, srcfile = srcfile),
                    error = function(e) e)
  if (inherits(exprs, "error")) {
    at <- regmatches(conditionMessage(exprs), regexpr("^[^:]*:([0-9]+):", conditionMessage(exprs)))
    line <- if (length(at)) as.integer(sub("^[^:]*:([0-9]+):", "\\1", at)) else NA
    finish(30L, error = list(class = "parseError", line = line))
  }

  # 4. The guard (optional layer), then the plot.
  state <- new.env()
  state$refusal <- NULL
  line_of_calls <- function(fallback) {
    line <- fallback
    for (call in sys.calls()) {
      sr <- attr(call, "srcref")
      if (!is.null(sr) && identical(attr(sr, "srcfile"), srcfile)) line <- sr[[1L]]
    }
    line
  }
  refuse <- function(rule, what) {
    # Recorded at once: a refusal counts even when the plot catches the error.
    if (is.null(state$refusal)) state$refusal <- list(rule = rule, line = line_of_calls(state$top_line))
    stop(structure(class = c("plotqRefused", "error", "condition"),
                   list(message = sprintf("plotq: %s is not allowed in a plot (%s)", what, rule), call = NULL)))
  }
  if (!identical(Sys.getenv("PLOTQ_R_GUARD", "1"), "0")) {
    all <- commandArgs(FALSE)
    here <- dirname(all[[match("-f", all) + 1L]])  # rguard.R lies beside this file
    source(file.path(here, "rguard.R"), local = TRUE)
    install_guard(refuse, getwd())
  }
  plot_env <- new.env()
  plot_env$quit <- plot_env$q <- function(save = "default", status = 0, runLast = TRUE) {
    stop(structure(class = c("plotqQuit", "condition"), list(message = "quit", call = NULL, status = status)))
  }
  attach(plot_env, name = "plotq:harness", warn.conflicts = FALSE)
  state$top_line <- NA
  error <- NULL
  exit_status <- NULL
  for (i in seq_along(exprs)) {
    state$top_line <- attr(exprs, "srcref")[[i]][[1L]]
    stopped <- tryCatch(
      withCallingHandlers({
        # As Rscript: a visible top-level value is printed (a bare `p` draws to Rplots.pdf).
        v <- withVisible(eval(exprs[[i]], globalenv()))
        if (v$visible) print(v$value)
        FALSE
      },
        error = function(e) {
          if (is.null(error)) error <<- list(class = class(e)[[1L]], line = line_of_calls(state$top_line))
        }),
      plotqQuit = function(e) { exit_status <<- e$status; TRUE },
      error = function(e) TRUE)
    if (stopped) break
  }
  # 5. The record.
  if (!is.null(state$refusal)) finish(31L, refusal = state$refusal)
  if (!is.null(exit_status)) {
    st <- suppressWarnings(as.integer(exit_status))
    if (length(st) == 1L && !is.na(st) && st != 0L) finish(32L, error = list(class = "quit", line = state$top_line))
    finish(0L)
  }
  if (!is.null(error)) finish(30L, error = error)
  finish(0L)
})
