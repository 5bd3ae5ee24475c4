#!/usr/bin/env bash
# Sets up a Debian 12 machine for plotq and builds it. Idempotent: installs only what is missing,
# and an existing build directory is reused (CMake rebuilds only what changed).
#   tools/setup.sh            install + build into ./build
#   PLOTQ_BUILD_DIR=DIR       build elsewhere
#   PLOTQ_SKIP_INSTALL=1      do not touch packages (e.g. not root)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PLOTQ_BUILD_DIR:-$root/build}

# python3 (Debian's CPython 3.11) is the sandbox runtime's base interpreter: it lives under /usr,
# which every job sees read-only (pyenv's lives under /root, a hidden path). python3-dev builds
# plotq_exec_arm.so; python3-venv bootstraps uv; libcairo2 is cairosvg's (pygal's PNG export);
# the fonts are what vl-convert and cairosvg find through fontconfig. clang-14 and its runtimes for
# the sanitizer tree are installed by tools/san.sh itself, which only it needs. libpng-dev: the
# sweep report's thumbnails (sweep/thumbnail.cpp). libpq-dev: the PostgreSQL engine's client
# (store/); postgresql-15: the throwaway server of the tests (tools/pg.sh). libssl-dev: OpenSSL's
# libcrypto. iproute2: the cluster's partition test (a node in a network namespace of its own).
packages=(build-essential cmake pkg-config libboost-dev libsqlitecpp-dev libsqlite3-dev
  libseccomp-dev nlohmann-json3-dev catch2 sqlite3 libpng-dev python3 python3-dev python3-venv
  libcairo2 fontconfig fonts-dejavu-core fonts-liberation2 ninja-build chromium nodejs npm
  libpq-dev postgresql-15 libssl-dev iproute2)

if [ "${PLOTQ_SKIP_INSTALL:-0}" != 1 ]; then
  missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  # node/npm may come from elsewhere on a developer machine; only install them when absent.
  if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    missing=("${missing[@]/nodejs}"); missing=("${missing[@]/npm}")
  fi
  read -r -a missing <<<"${missing[*]}"
  if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    # The tests start their own servers (tools/pg.sh): the package must not create and start a
    # 'main' cluster of its own. Before postgresql-common is installed, a drop-in that its
    # createcluster.conf includes (an own createcluster.conf would clash with the package's).
    cc=/etc/postgresql-common/createcluster.conf
    if [ -f "$cc" ]; then
      if ! grep -Eq '^[[:space:]]*create_main_cluster[[:space:]]*=[[:space:]]*false' "$cc"; then
        sed -i -E '/^[#[:space:]]*create_main_cluster[[:space:]]*=/d' "$cc"
        echo 'create_main_cluster = false' >>"$cc"
      fi
    else
      mkdir -p /etc/postgresql-common/createcluster.d
      echo 'create_main_cluster = false' >/etc/postgresql-common/createcluster.d/plotq.conf
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  # Browser-test driver (tests/browser, ctest browser.page): playwright-core from its lock file; it
  # drives Debian's /usr/bin/chromium and downloads no browser.
  if [ -f "$root/tests/browser/package-lock.json" ] && [ ! -d "$root/tests/browser/node_modules/playwright-core" ]; then
    (cd "$root/tests/browser" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  fi
  # JavaScript snippet libraries (runtime/js): chart.js, d3, echarts, highcharts, MUI X (+ React,
  # esbuild) exactly as package-lock.json pins them, each file checked against its integrity hash
  # (npm ci). A re-run with an unchanged lock does nothing; the identity is written after install.
  js=$root/runtime/js
  js_want=$(sha256sum "$js/package-lock.json" | cut -d' ' -f1)
  if [ "$(cat "$js/node_modules/.plotq-lock-sha256" 2>/dev/null)" != "$js_want" ] || [ ! -f "$js/plotq-js-runtime.json" ]; then
    echo "setup: installing runtime/js/package-lock.json"
    rm -f "$js/plotq-js-runtime.json"
    (cd "$js" && npm ci --no-audit --no-fund --loglevel=error)
    node "$js/manifest.mjs" >"$js/plotq-js-runtime.json.tmp"
    mv "$js/plotq-js-runtime.json.tmp" "$js/plotq-js-runtime.json"
    echo "$js_want" >"$js/node_modules/.plotq-lock-sha256"
  fi
  # The R runtime (runtime/r, the R row): Debian 12's R and the R packages R files use, each pinned
  # to the version runtime/r/r-packages.lock names (`pkg=version`: CRAN is not reachable, and a
  # newer Debian point release must not change what R renders without a new lock). Then the
  # identity, runtime/r/plotq-r-runtime.json (R's version and every package's, the locked ones and
  # what they need), which plotqd checks against what is installed at start.
  r_lock=$root/runtime/r/r-packages.lock
  r_pins=()
  while read -r pin _; do r_pins+=("$pin"); done < <(grep -Ev '^[[:space:]]*(#|$)' "$r_lock")
  r_missing=()
  for pin in "${r_pins[@]}"; do
    [ "$(dpkg-query -W -f='${Version}' "${pin%%=*}" 2>/dev/null)" = "${pin#*=}" ] || r_missing+=("$pin")
  done
  if [ ${#r_missing[@]} -gt 0 ]; then
    echo "setup: installing ${r_missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends --allow-downgrades "${r_missing[@]}" >/dev/null
  fi
  Rscript --vanilla "$root/runtime/r/manifest.R" "$r_lock" "$root/runtime/r/plotq-r-runtime.json"
  # Figure renderer (sandbox/figure): playwright-core from its lock file, no browser download.
  if [ -f "$root/sandbox/figure/package-lock.json" ] && [ ! -d "$root/sandbox/figure/node_modules/playwright-core" ]; then
    (cd "$root/sandbox/figure" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

# The sandbox runtime (runtime/README.md): a venv of Debian's python3 with exactly the packages of
# runtime/requirements.lock, every one checked against its hashes, wheels only. A re-run with an
# unchanged lock does nothing (the venv keeps the lock's sha256 in .plotq-lock-sha256).
if [ "${PLOTQ_SKIP_RUNTIME:-0}" != 1 ]; then
  "$root/tools/runtime.sh"
fi

jobs=$(nproc 2>/dev/null || echo 2)
if [ ! -f "$build/CMakeCache.txt" ]; then
  # -g1: backtraces with functions and lines, no locals; it compiles in about two thirds of -g's
  # CPU time, which CI's clean build pays in full.
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" >/dev/null
fi
cmake --build "$build" -j "$jobs"
