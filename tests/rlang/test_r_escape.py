"""R escape suite (issue 35): real attacks from R files through a real plotqd's POST /render, once
with the R-side guard on and once with it off (PLOTQ_R_GUARD=0): the kernel layers must hold
alone. Each attack reports what it observed as its error class (observed_refused when every try
failed, observed_ESCAPED when one got through), so the test sees that it ran; and the host checks
what it could have reached: marker files outside the work dir, a loopback listener that must
never see a connection, plotqd still answering, and a plain render right after each attack.

    runtime/venv/bin/python tests/rlang/test_r_escape.py <plotqd binary> on|off [attack,...]
"""
import os
import re
import shutil
import socket
import sys
import threading

from rtest_util import Checks, dump, render, request, skip_without_r, start_plotqd, theme_png

OBSERVE = r'''
observe <- function(refused) stop(structure(class = c(if (refused) "observed_refused" else "observed_ESCAPED",
                                                     "error", "condition"), list(message = "", call = NULL)))
failed <- function(expr) inherits(tryCatch(expr, error = function(e) e, warning = function(w) w), "condition")
'''

PLAIN = r'''library(ggplot2)
THEME <- Sys.getenv("ANYPLOT_THEME", "light")
p <- ggplot(data.frame(x = 1:3, y = c(2, 1, 3)), aes(x, y)) + geom_point()
ggsave(sprintf("plot-%s.png", THEME), plot = p, device = ragg::agg_png, width = 8, height = 4.5, units = "in", dpi = 400)
'''


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = False
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
                self.accepted += 1
                c.close()
            except OSError:
                pass


def attacks(marker_dir, listener_port, db_path, secret):
    m = marker_dir
    lp = listener_port
    # name -> (R source, outcomes accepted with the guard on, with it off, host markers that must stay absent)
    # An outcome is "reason" or "reason:class" or "guard_refused:rule".
    return {
        "system": ('''ok <- failed(system("touch exec-marker; touch %s/system")) || TRUE
observe(!file.exists("exec-marker"))''' % m, {"guard_refused:process"}, {"plot_error:observed_refused"}, ["system"]),
        "system2": ('''try(system2("touch", c("exec-marker", "%s/system2")))
observe(!file.exists("exec-marker"))''' % m, {"guard_refused:process"}, {"plot_error:observed_refused"}, ["system2"]),
        "pipe": ('''try({ con <- pipe("touch exec-marker %s/pipe; echo hi"); readLines(con); close(con) })
observe(!file.exists("exec-marker"))''' % m, {"guard_refused:process"}, {"plot_error:observed_refused"}, ["pipe"]),
        # .Internal reaches R's C system() past any R-level guard: the exec filter refuses it.
        "internal_system": ('''try(.Internal(system("touch exec-marker %s/internal", FALSE, 0)))
observe(!file.exists("exec-marker"))''' % m, {"plot_error:observed_refused"}, {"plot_error:observed_refused"}, ["internal"]),
        # A fork through parallel's C entry (past the guard), then exec in the child.
        "call_fork_exec": ('''p <- tryCatch(.Call(parallel:::C_mcfork, FALSE), error = function(e) NULL)
if (!is.null(p) && inherits(p, "masterProcess")) { try(.Internal(system("touch exec-marker %s/forkexec", FALSE, 0))); .Call(parallel:::C_mcexit, 0L) }
Sys.sleep(1)
observe(!file.exists("exec-marker"))''' % m, {"plot_error:observed_refused"}, {"plot_error:observed_refused"}, ["forkexec"]),
        "read_secrets": ('''r1 <- failed(readLines("/etc/shadow"))
r2 <- failed(readBin("%s", "raw", 100)) || !file.exists("%s")
r3 <- length(list.files("/var/lib/plotq/runs")) == 0
observe(r1 && r2 && r3)''' % (db_path, db_path), {"plot_error:observed_refused"}, {"plot_error:observed_refused"}, []),
        "write_outside": ('''a <- failed(writeLines("x", "%s/write"))
b <- failed(writeLines("x", "/etc/plotq-r-marker"))
c <- failed(writeLines("x", "/tmp/plotq-r-marker"))
d <- failed(writeLines("x", "/tmp/job/../plotq-r-marker"))
observe(a && b && c && d)''' % m, {"plot_error:observed_refused"}, {"plot_error:observed_refused"},
                          ["write", "/etc/plotq-r-marker", "/tmp/plotq-r-marker"]),
        "symlink_output": ('''file.symlink("/etc/passwd", sprintf("plot-%s.png", Sys.getenv("ANYPLOT_THEME")))''',
                           {"output_rejected"}, {"output_rejected"}, []),
        "hardlink_output": ('''ok <- file.link("/etc/passwd", sprintf("plot-%s.png", Sys.getenv("ANYPLOT_THEME")))
if (isTRUE(ok)) observe(FALSE)''', {"no_output", "output_rejected"}, {"no_output", "output_rejected"}, []),
        "url": ('''try(readLines(url("http://127.0.0.1:%d/")))
observe(TRUE)''' % lp, {"guard_refused:network"}, {"plot_error:observed_refused"}, []),
        # download.file makes its (empty) destfile before it connects.
        "download_file": ('''r <- failed(download.file("http://127.0.0.1:%d/x", "got", quiet = TRUE))
observe(r && (!file.exists("got") || file.size("got") == 0))''' % lp, {"guard_refused:network"}, {"plot_error:observed_refused"}, []),
        "socket": ('''r <- failed(socketConnection("127.0.0.1", %d, blocking = TRUE, timeout = 2))
observe(r)''' % lp, {"guard_refused:socket"}, {"plot_error:observed_refused"}, []),
        "mcfork_bomb": ('''n <- 0
err <- FALSE
for (i in 1:500) {
  p <- tryCatch(parallel:::mcfork(), error = function(e) { err <<- TRUE; NULL })
  if (is.null(p)) break
  if (inherits(p, "masterProcess")) { Sys.sleep(30); parallel:::mcexit(0L) }
  n <- n + 1
}
observe(err)''', {"guard_refused:process"}, {"plot_error:observed_refused", "memory"}, []),
        "memory_bomb": ('''l <- list()
repeat l[[length(l) + 1L]] <- numeric(2.5e7)''', {"plot_error:simpleError", "memory"}, {"plot_error:simpleError", "memory"}, []),
        "disk_bomb": ('''for (i in 1:400) writeBin(raw(1e6), sprintf("fill-%d.bin", i))''', {"disk"}, {"disk"}, []),
        "endless_loop": ('''repeat {}''', {"timeout", "cpu"}, {"timeout", "cpu"}, []),
        "dyn_load_own_so": ('''file.copy(file.path(R.home("library"), "stats", "libs", "stats.so"), "mine.so")
r <- failed(dyn.load("mine.so"))
observe(r)''', {"guard_refused:code"}, {"plot_error:observed_refused"}, []),
        "getenv_secrets": ('''env <- Sys.getenv()
observe(!any(grepl("%s", env, fixed = TRUE)) && !any(grepl("%s", names(env), fixed = TRUE)))''' % (secret, "PLOTQ_TEST_SECRET"),
                           {"plot_error:observed_refused"}, {"plot_error:observed_refused"}, []),
    }


def outcome_of(out):
    reason = out["reason"] or "ok"
    if reason == "plot_error":
        return "plot_error:%s" % ((out.get("error") or {}).get("class"))
    if reason == "guard_refused":  # the rule is in the sentence: "... may not do (process) at line 3 ..."
        m = re.search(r"\((\w+)\)", out.get("stderr_tail") or "")
        return "guard_refused:%s" % (m.group(1) if m else "?")
    return reason


def main():
    skip_without_r()
    guard = sys.argv[2]
    assert guard in ("on", "off")
    secret = "s3cr3t-%d" % os.getpid()
    marker_dir = "/var/lib/plotq-rtest-%d" % os.getpid()  # outside /tmp: jobs see it (read-only)
    os.makedirs(marker_dir, exist_ok=True)
    os.chmod(marker_dir, 0o777)
    listener = Listener()
    d, tmp = start_plotqd(sys.argv[1], env={"PLOTQ_R_GUARD": "1" if guard == "on" else "0",
                                            "PLOTQ_TEST_SECRET": secret, "AWS_SECRET_ACCESS_KEY": secret})
    check = Checks()
    failures = check.failures

    try:
        only = set(sys.argv[3].split(",")) if len(sys.argv) > 3 else None  # attack names, to rerun a few
        for name, (src, on, off, markers) in attacks(marker_dir, listener.port, d.db_path, secret).items():
            if only and name not in only:
                continue
            accepted = on if guard == "on" else off
            timeout = 8 if name == "endless_loop" else 60
            status, ans = render(d.port, "esc-%s-%s" % (guard, name), OBSERVE + src, timeout_s=timeout)
            if status != 200:
                check(False, "%s: POST /render answered %s %s" % (name, status, dump(ans)[:300]))
                continue
            out = ans["outputs"]["light"]
            got = outcome_of(out)
            check(got in accepted and theme_png(ans, "light") is None,
                  "%s [guard %s]: %s (accepted %s) %s" % (name, guard, got, sorted(accepted), out["stderr_tail"][:120]))
            for mk in markers:
                check(not os.path.exists(os.path.join(marker_dir, mk)), "%s: no marker %s/%s on the host" % (name, marker_dir, mk))
            status, _ = request(d.port, "GET", "/healthz")
            check(status == 200 and d.proc.poll() is None, "%s: plotqd up (healthz %s)" % (name, status))
            status, ans = render(d.port, "esc-%s-%s-after" % (guard, name), PLAIN)
            after = ans["outputs"]["light"] if status == 200 else {}
            check(status == 200 and after.get("reason") is None and after.get("width") == 3200,
                  "%s: the next render is fine (%s %s)" % (name, status, after.get("reason")))
        check(listener.accepted == 0, "the loopback listener saw no connection (%d)" % listener.accepted)
    finally:
        listener.stop = True
        d.stop()
        shutil.rmtree(marker_dir, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)
    print("%d failure(s)" % len(failures))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
