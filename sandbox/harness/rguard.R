# rguard.R: the R-side guard of an R job (sourced by rharness.R when PLOTQ_R_GUARD is not "0").
#
# Early, precise refusals with a rule of the refusal vocabulary (sandbox/harness/guard.py RULES):
# the plot gets an error of class plotqRefused and the render is guard_refused with the rule and
# the plot's line. It is an optional layer: a plot can reach the original functions through
# .Internal, .Call or a copy taken by a package, and rebind anything here. What holds the job is
# the kernel: no exec after the start (seccomp), no network (an empty net namespace), a read-only
# tree but a noexec work dir, rlimits, cgroups, its own uid. tests/sandbox/test_r_escape.py runs
# every attack with this guard off as well.
install_guard <- function(refuse, work_dir) {
  deny <- function(rule, what) {
    force(rule); force(what)
    function(...) refuse(rule, what)
  }
  # name -> rule; each replaced in base's namespace and in package:base (two environments).
  base_rules <- list(
    system = "process", system2 = "process", pipe = "process",
    url = "network", socketConnection = "socket",
    socketAccept = "socket", make.socket = "socket", serverSocket = "socket")
  # Not Sys.setenv: packages set variables as they load (ggplot2's dependencies do), and the
  # job's environment is its own (the host hands it a complete one, nothing secret in it).
  for (name in names(base_rules)) {
    fn <- deny(base_rules[[name]], name)
    for (env in list(baseenv(), .BaseNamespaceEnv)) {
      if (!exists(name, envir = env, inherits = FALSE)) next
      locked <- bindingIsLocked(name, env)
      if (locked) unlockBinding(name, env)
      assign(name, fn, envir = env)
      if (locked) lockBinding(name, env)
    }
  }
  # utils (attached at start): download.file, and what reaches the network or a shell through it.
  utils_rules <- list(download.file = "network", url.show = "network", browseURL = "process")
  utils_ns <- asNamespace("utils")
  utils_pkg <- if ("package:utils" %in% search()) as.environment("package:utils") else NULL
  for (name in names(utils_rules)) {
    fn <- deny(utils_rules[[name]], name)
    for (env in Filter(Negate(is.null), list(utils_ns, utils_pkg))) {
      if (!exists(name, envir = env, inherits = FALSE)) next
      locked <- bindingIsLocked(name, env)
      if (locked) unlockBinding(name, env)
      assign(name, fn, envir = env)
      if (locked) lockBinding(name, env)
    }
  }
  # dyn.load of a file the plot wrote (anything under the work dir): refused here; the kernel
  # refuses it anyway (the work dir is mounted noexec, so its mmap with PROT_EXEC fails).
  real_dyn_load <- base::dyn.load
  work <- normalizePath(work_dir, mustWork = FALSE)
  guarded_dyn_load <- function(x, ...) {
    p <- normalizePath(x, mustWork = FALSE)
    if (!startsWith(p, "/usr/")) refuse("code", "dyn.load")
    real_dyn_load(x, ...)
  }
  for (env in list(baseenv(), .BaseNamespaceEnv)) {
    unlockBinding("dyn.load", env)
    assign("dyn.load", guarded_dyn_load, envir = env)
    lockBinding("dyn.load", env)
  }
  # parallel's forks (mcparallel, mclapply, mcfork): a fork bomb is held by RLIMIT_NPROC and the
  # pids cgroup; refused here when the plot asks for parallel.
  setHook(packageEvent("parallel", "onLoad"), function(...) {
    ns <- asNamespace("parallel")
    for (name in c("mcfork", "mcparallel", "mclapply", "makeCluster", "makeForkCluster", "makePSOCKcluster")) {
      if (!exists(name, envir = ns, inherits = FALSE)) next
      unlockBinding(name, ns)
      assign(name, deny("process", paste0("parallel::", name)), envir = ns)
      lockBinding(name, ns)
    }
  })
  invisible(work)
}
