# Writes runtime/r/plotq-r-runtime.json, the R runtime's identity (runtime/README.md, "runtime/r"):
#   {"id", "lock_sha256", "r", "packages": {name: version}}
# Run by tools/setup.sh after apt-get installed r-packages.lock:
#   Rscript --vanilla runtime/r/manifest.R runtime/r/r-packages.lock runtime/r/plotq-r-runtime.json
# Fails (exit 1) unless R and every locked package are installed; records each locked package and
# every package it needs (Depends, Imports, LinkingTo, recursively) at its installed version, so
# that a changed dependency changes the id. lock_sha256 is sha256 of the lock's bytes followed by
# the resolved "name version" lines; id its first 12 hex digits.
args <- commandArgs(trailingOnly = TRUE)
if (length(args) != 2L) { message("usage: manifest.R LOCK OUT"); quit("no", 2L) }
lock_lines <- readLines(args[[1L]], warn = FALSE)
lock_lines <- trimws(lock_lines[!grepl("^\\s*(#|$)", lock_lines)])
wanted <- vapply(strsplit(lock_lines, "\\s+"), function(f) f[[2L]], "")
installed <- installed.packages()
missing <- setdiff(setdiff(wanted, "R"), rownames(installed))
if (length(missing)) { message("not installed: ", paste(missing, collapse = ", ")); quit("no", 1L) }
want_pkgs <- setdiff(wanted, "R")
deps <- tools::package_dependencies(want_pkgs, db = installed, which = c("Depends", "Imports", "LinkingTo"),
                                    recursive = TRUE)
base_pkgs <- rownames(installed)[!is.na(installed[, "Priority"]) & installed[, "Priority"] == "base"]
all_pkgs <- sort(unique(c(want_pkgs, unlist(deps, use.names = FALSE))))
all_pkgs <- setdiff(all_pkgs, base_pkgs)  # base packages are R's own: R's version names them
gone <- setdiff(all_pkgs, rownames(installed))
if (length(gone)) { message("dependencies not installed: ", paste(gone, collapse = ", ")); quit("no", 1L) }
versions <- c(R = paste(R.version$major, R.version$minor, sep = "."),
              vapply(all_pkgs, function(p) packageDescription(p)$Version, ""))
resolved <- paste(names(versions), versions)
tmp <- tempfile()
writeBin(c(readBin(args[[1L]], "raw", file.size(args[[1L]])), charToRaw(paste0(paste(resolved, collapse = "\n"), "\n"))), tmp)
sha <- sub("\\s.*$", "", system2("sha256sum", tmp, stdout = TRUE))
unlink(tmp)
if (!grepl("^[0-9a-f]{64}$", sha)) { message("sha256sum failed"); quit("no", 1L) }
q <- function(s) paste0('"', s, '"')
body <- paste0("  ", q(names(versions)), ": ", q(versions), collapse = ",\n")
json <- paste0('{\n "id": ', q(substr(sha, 1, 12)), ',\n "lock_sha256": ', q(sha), ',\n "r": ', q(versions[["R"]]),
               ',\n "packages": {\n', body, '\n }\n}\n')
out <- args[[2L]]
writeLines(json, paste0(out, ".tmp"), sep = "")
invisible(file.rename(paste0(out, ".tmp"), out))
cat(sprintf("R runtime %s: R %s, %d packages\n", substr(sha, 1, 12), versions[["R"]], length(all_pkgs)))
