// The process tree below a pid, read from /proc: what the figure tests and bench/figure_bench.mjs
// watch of a Chromium (its renderer processes, their CPU and memory).
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

// Milliseconds per clock tick, the unit of the CPU times /proc/<pid>/stat gives.
export const TICK_MS = 1000 / Number(spawnSync('getconf', ['CLK_TCK']).stdout.toString().trim() || 100);

// The processes of the tree below `root` (root included): [{pid, ppid, state, cpu, reaped}],
// cpu = the process's own user + sys ticks, reaped = its reaped children's.
export function treeProcs(root) {
  const procs = [];
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${name}/stat`, 'latin1');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      procs.push({ pid: Number(name), ppid: Number(f[1]), state: f[0],
        cpu: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) });
    } catch { /* gone */ }
  }
  const inTree = new Set([root]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const p of procs) if (!inTree.has(p.pid) && inTree.has(p.ppid)) { inTree.add(p.pid); grew = true; }
  }
  return procs.filter((p) => inTree.has(p.pid));
}

// A Chromium page (renderer) process; false once it is gone.
export function isRenderer(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('--type=renderer');
  } catch {
    return false;
  }
}
