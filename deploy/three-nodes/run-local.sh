#!/usr/bin/env bash
# Three plotqd nodes in cluster mode on this machine, over one throwaway PostgreSQL (tools/pg.sh):
# each on a free 127.0.0.1 port, in development mode (loopback callers pass as X-Plotq-User).
# Prints their URLs; Ctrl-C stops the nodes (they drain) and removes the database. As root (the
# sandbox). PLOTQ_* settings in the environment reach every node; PLOTQ_BUILD_DIR names the build.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
plotqd=${PLOTQ_BUILD_DIR:-$root/build}/plotqd
[ "$(id -u)" = 0 ] || { echo "run-local: run as root (the sandbox forks jobs under their own uids)" >&2; exit 2; }
[ -x "$plotqd" ] || { echo "run-local: no $plotqd; build it first (tools/setup.sh)" >&2; exit 2; }
# An older plotqd would take PLOTQ_CLUSTER for an unknown name and run three separate nodes.
[[ $("$plotqd" --help) == *PLOTQ_CLUSTER* ]] || { echo "run-local: $plotqd has no cluster mode" >&2; exit 2; }

dir=$(mktemp -d "${TMPDIR:-/tmp}/plotq-3n.XXXXXX")
chmod 711 "$dir" # the postgres user must reach its cluster dir inside
pids=()
stopped=0
# shellcheck disable=SC2317 # reached through the EXIT trap
stop_all() {
  [ "$stopped" = 1 ] && return
  stopped=1
  # SIGTERM once: each node drains (work in flight gets PLOTQ_SHUTDOWN_GRACE_S), then exits.
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [ -d "$dir/pg" ] && { "$root/tools/pg.sh" stop "$dir/pg" >/dev/null 2>&1 || true; }
  rm -rf "$dir"
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

db=$("$root/tools/pg.sh" start "$dir/pg")
nodes=(a b c)
for node in "${nodes[@]}"; do
  # setsid: a node must not get the terminal's Ctrl-C as well as our SIGTERM (a second signal
  # cuts its drain short).
  PLOTQ_DB=$db PLOTQ_CLUSTER=on PLOTQ_NODE_ID=$node PLOTQ_LISTEN=127.0.0.1:0 \
    PLOTQ_ENVIRONMENT=development PLOTQ_SLOTS=${PLOTQ_SLOTS:-1} \
    setsid "$plotqd" >"$dir/node-$node.log" 2>&1 &
  pids+=("$!")
done

# Each node logs the port it got: {"address":"127.0.0.1:PORT",...,"event":"listening",...}.
for i in 0 1 2; do
  node=${nodes[i]}
  log=$dir/node-$node.log
  for _ in $(seq 1 300); do
    grep -q '"event":"listening"' "$log" && break
    kill -0 "${pids[i]}" 2>/dev/null || break
    sleep 0.1
  done
  address=$(grep '"event":"listening"' "$log" | sed -n 's/.*"address":"\([^"]*\)".*/\1/p')
  if [ -z "$address" ]; then
    echo "run-local: node $node did not start:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  echo "node $node: http://$address/ (log $log)"
done
echo "database: $db"
echo "Ctrl-C stops everything."
# Until Ctrl-C, or until a node ends by itself (then the rest are stopped too).
status=0
wait -n "${pids[@]}" || status=$?
echo "run-local: a node exited (status $status); stopping the others" >&2
exit 1
