// Preloaded into a `smsgate serve` child (node --import) by test/inbound/inbound-limits.test.ts: the
// longest stretch of work the main thread did without letting its event loop turn. A 5 ms timer
// ticks; between two ticks, /proc/self/task/<pid>/schedstat (field 1: time on a CPU, ns) says how
// long the main thread ran. So a slice of synchronous work (JavaScript, a SQLite statement) shows
// as the CPU time between the ticks around it, while the time the thread sat runnable without a
// core does not: on a machine loaded far beyond its cores (load 15 on 2 here), plain
// monitorEventLoopDelay shows turns of 100 ms and more in a process that does nothing at all.
// The wall-clock gap is reported beside it.
// Writes {seq, resets, maxCpuMs, maxGapMs, ticks} to $LOOP_PROBE_FILE every 100 ms; SIGUSR2 resets.
import { readFileSync, writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const file = process.env.LOOP_PROBE_FILE;
if (file !== undefined) {
  const schedstat = `/proc/self/task/${process.pid}/schedstat`;
  const cpuNs = () => Number(readFileSync(schedstat, 'utf8').split(' ')[0]);
  let last = { atMs: performance.now(), cpuNs: cpuNs() };
  let state = { seq: 0, resets: 0, maxCpuMs: 0, maxGapMs: 0, ticks: 0 };
  const tick = setInterval(() => {
    const now = { atMs: performance.now(), cpuNs: cpuNs() };
    state.maxCpuMs = Math.max(state.maxCpuMs, (now.cpuNs - last.cpuNs) / 1e6);
    state.maxGapMs = Math.max(state.maxGapMs, now.atMs - last.atMs);
    state.ticks++;
    last = { atMs: performance.now(), cpuNs: cpuNs() };
  }, 5);
  tick.unref();
  const report = setInterval(() => {
    state.seq++;
    writeFileSync(file, JSON.stringify(state));
  }, 100);
  report.unref();
  process.on('SIGUSR2', () => {
    state = { seq: state.seq, resets: state.resets + 1, maxCpuMs: 0, maxGapMs: 0, ticks: 0 };
    last = { atMs: performance.now(), cpuNs: cpuNs() };
  });
}
