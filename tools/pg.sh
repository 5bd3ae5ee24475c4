#!/usr/bin/env bash
# A throwaway PostgreSQL 15 for development and the tests (issue 32): a fresh cluster in a temp
# dir, reached only through a Unix socket in that dir (no TCP port), fsync off, gone when done.
# Parallel runs never collide: each has its own dir, so its own socket and lock file.
#   tools/pg.sh run [--] CMD...   start one, run CMD with PLOTQ_TEST_PG set to its conninfo, stop
#                                 and remove it when CMD ends (also on failure, INT, TERM); exits
#                                 with CMD's status
#   tools/pg.sh start [DIR]       start one in DIR (new or empty; default: a new temp dir) and print
#                                 its conninfo; it runs until `tools/pg.sh stop DIR`
#   tools/pg.sh stop DIR          stop it and remove DIR (only a dir that `start` made)
#   tools/pg.sh down DIR [MODE]   stop its server and keep DIR (MODE fast, the default, or immediate:
#                                 as in a crash, the next start replays the WAL); the fault tests
#   tools/pg.sh up DIR            start that server again on the same data
#   tools/pg.sh bindir            print the server binaries' dir (exit 2 when there are none)
#   PLOTQ_PG_BINDIR=DIR           the binaries (default: /usr/lib/postgresql/15/bin, else
#                                 `pg_config --bindir`)
#   PLOTQ_PG_LISTEN=ADDR          start/up: also listen on TCP at ADDR (its listen_addresses; default
#                                 none); the caller adds the pg_hba.conf line its clients need
# The conninfo is `host=DIR user=postgres dbname=postgres` (libpq; trust auth, so the dir's mode,
# 0700, is what keeps other users out). As root the server runs as the `postgres` user, since
# initdb refuses root; otherwise as the caller. fsync=off: a crash may lose the cluster, which a
# throwaway one may; never use these settings for data that matters.
set -euo pipefail

usage() {
  sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

find_bindir() {
  local d dirs=(/usr/lib/postgresql/15/bin "$(pg_config --bindir 2>/dev/null || true)")
  [ -n "${PLOTQ_PG_BINDIR:-}" ] && dirs=("$PLOTQ_PG_BINDIR")
  for d in "${dirs[@]}"; do
    if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ] && [ -x "$d/postgres" ]; then
      echo "$d"
      return 0
    fi
  done
  echo "pg.sh: no PostgreSQL server binaries (initdb, pg_ctl, postgres) in ${dirs[*]};" \
    "install Debian's postgresql-15 (tools/setup.sh) or set PLOTQ_PG_BINDIR" >&2
  return 2
}

# Runs a server binary as the cluster's owner, from inside the cluster's dir (a caller's cwd such as
# /root is not readable by postgres) and with HOME there (the postgres user's home may be missing).
as_owner() {
  local dir=$1
  shift
  if [ "$(id -u)" = 0 ]; then
    (cd "$dir" && runuser -u postgres -- env HOME="$dir" "$@")
  else
    (cd "$dir" && env HOME="$dir" "$@")
  fi
}

conninfo() { echo "host=$1 user=postgres dbname=postgres"; }

# start DIR: DIR exists and is empty. Leaves DIR/.plotq-pg as the mark that stop may remove it.
start() {
  local dir=$1 bin
  touch "$dir/.plotq-pg"
  bin=$(find_bindir) || return 2
  # A Unix socket path holds at most 107 bytes.
  if [ $((${#dir} + 16)) -gt 107 ]; then
    echo "pg.sh: $dir is too long for a Unix socket path; use a shorter TMPDIR" >&2
    return 2
  fi
  if [ "$(id -u)" = 0 ]; then
    if ! id -u postgres >/dev/null 2>&1; then
      echo "pg.sh: running as root, but there is no 'postgres' user to run the server as (initdb refuses root)" >&2
      return 2
    fi
    chown postgres: "$dir"
    if ! runuser -u postgres -- test -x "$dir"; then
      echo "pg.sh: the postgres user cannot reach $dir (a parent dir is private); use another TMPDIR" >&2
      return 2
    fi
  fi
  chmod 700 "$dir"
  if ! as_owner "$dir" "$bin/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C.UTF-8 \
    --no-sync >"$dir/initdb.log" 2>&1; then
    echo "pg.sh: initdb failed:" >&2
    cat "$dir/initdb.log" >&2
    return 1
  fi
  serve "$dir" "$bin"
}

# serve DIR BIN: starts the server of the cluster in DIR (made by start).
serve() {
  local dir=$1 bin=$2 listen=${PLOTQ_PG_LISTEN:-}
  if ! [[ "$listen" =~ ^[0-9A-Za-z.:,-]*$ ]]; then
    echo "pg.sh: PLOTQ_PG_LISTEN must be addresses, comma-separated" >&2
    return 2
  fi
  # listen_addresses='' (unless PLOTQ_PG_LISTEN): no TCP port at all; the socket lives in the
  # cluster's own dir.
  if ! as_owner "$dir" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -t 60 \
    -o "-c listen_addresses='$listen' -c unix_socket_directories='$dir' -c fsync=off" start >/dev/null; then
    echo "pg.sh: the server did not start:" >&2
    tail -n 30 "$dir/log" >&2 || true
    return 1
  fi
}

# down DIR MODE / up DIR: the server of a cluster that start made stopped and started again, the
# cluster kept (the fault tests restart their own server under load).
own_cluster() {
  if [ ! -f "$1/.plotq-pg" ] || [ ! -d "$1/data" ]; then
    echo "pg.sh: $1 is not a cluster that tools/pg.sh start made" >&2
    return 2
  fi
}
down() {
  local dir=$1 mode=$2 bin
  own_cluster "$dir" || return 2
  case "$mode" in fast | immediate) ;; *) usage ;; esac
  bin=$(find_bindir) || return 2
  as_owner "$dir" "$bin/pg_ctl" -D "$dir/data" -m "$mode" -w -t 30 stop >/dev/null
}
up() {
  local dir=$1 bin
  own_cluster "$dir" || return 2
  bin=$(find_bindir) || return 2
  serve "$dir" "$bin"
}

# stop DIR: stops the server (if it runs) and removes DIR, only if start made it.
stop() {
  local dir=$1 bin
  if [ ! -f "$dir/.plotq-pg" ]; then
    echo "pg.sh: $dir was not made by tools/pg.sh start; leaving it alone" >&2
    return 2
  fi
  bin=$(find_bindir 2>/dev/null) || bin=
  if [ -n "$bin" ] && [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$dir" "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null 2>&1 ||
      as_owner "$dir" "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

new_dir() { mktemp -d "${TMPDIR:-/tmp}/plotq-pg.XXXXXX"; }

cmd_run() {
  [ "${1:-}" = -- ] && shift
  [ $# -gt 0 ] || usage
  find_bindir >/dev/null || exit 2
  dir=$(new_dir)
  child=
  # Whatever ends this script (CMD's end, a failed start, INT, TERM) stops and removes the server.
  trap 'stop "$dir" >/dev/null 2>&1 || true' EXIT
  on_signal() {
    [ -n "$child" ] && kill -"$1" "$child" 2>/dev/null && wait "$child" 2>/dev/null
    exit $((128 + $2))
  }
  trap 'on_signal INT 2' INT
  trap 'on_signal TERM 15' TERM
  start "$dir" || exit $?
  # CMD runs in the background so that a TERM to this script is handled at once (bash runs traps
  # only between foreground commands). A background command of a script would get stdin from
  # /dev/null and SIGINT/SIGQUIT ignored (which its own children, e.g. Python, would inherit):
  # stdin is passed on explicitly and env --default-signal gives the signals back their defaults.
  PLOTQ_TEST_PG=$(conninfo "$dir") env --default-signal=INT,QUIT "$@" <&0 &
  child=$!
  local status=0
  wait "$child" || status=$?
  child=
  exit "$status"
}

case "${1:-}" in
  run)
    shift
    cmd_run "$@"
    ;;
  start)
    [ $# -le 2 ] || usage
    find_bindir >/dev/null || exit 2
    if [ -n "${2:-}" ]; then
      dir=$2
      mkdir -p "$dir"
      dir=$(cd "$dir" && pwd)
      if [ -n "$(ls -A "$dir")" ]; then
        echo "pg.sh: $dir is not empty" >&2
        exit 2
      fi
    else
      dir=$(new_dir)
    fi
    status=0
    start "$dir" || status=$?
    if [ "$status" != 0 ]; then
      stop "$dir" >/dev/null 2>&1 || true
      exit "$status"
    fi
    conninfo "$dir"
    ;;
  stop)
    [ $# -eq 2 ] || usage
    stop "$(cd "$2" 2>/dev/null && pwd || echo "$2")"
    ;;
  down)
    [ $# -ge 2 ] && [ $# -le 3 ] || usage
    down "$(cd "$2" && pwd)" "${3:-fast}"
    ;;
  up)
    [ $# -eq 2 ] || usage
    up "$(cd "$2" && pwd)"
    ;;
  bindir)
    find_bindir
    ;;
  *)
    usage
    ;;
esac
