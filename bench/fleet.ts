/**
 * bench:fleet — a fleet on 127.0.0.1: one mirror, N `airlock serve --follow` replicas, nginx in
 * front (test/fleet/harness.ts). Prints, at a larger load than the fleet test:
 *  - latency p50/p99 of the same reader load through nginx vs direct to one replica (the peer),
 *    interleaved over --rounds, medians and the ratio;
 *  - --rollouts rollouts under load through nginx: switch spread across replicas, failed
 *    requests, asset 404s (medians and max).
 * Usage: npm run bench:fleet -- [--replicas 3] [--readers 32] [--seconds 5] [--rounds 3] [--rollouts 3]
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { percentile, runLoad, startFleet } from '../test/fleet/harness.js';

const { values } = parseArgs({
  options: {
    replicas: { type: 'string', default: '3' },
    readers: { type: 'string', default: '32' },
    seconds: { type: 'string', default: '5' },
    rounds: { type: 'string', default: '3' },
    rollouts: { type: 'string', default: '3' },
    'poll-ms': { type: 'string', default: '500' },
    'lead-ms': { type: 'string', default: '2000' },
  },
});
const n = (k: keyof typeof values) => Number(values[k]);
const median = (xs: number[]) => percentile(xs, 50);
const fmt = (x: number) => x.toFixed(2);

async function main(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-fleet-'));
  const fleet = await startFleet({ dir, replicas: n('replicas'), pollMs: n('poll-ms'), leadMs: n('lead-ms') });
  try {
    const ms = n('seconds') * 1000;
    const load = (url: string, maxMs: number, signal = new AbortController().signal) => runLoad(url, { readers: n('readers'), holdMs: 0, maxMs, signal });
    await load(fleet.lb, 1000); // warm-up
    const rows: Array<{ via: string; p50: number; p99: number; rps: number }> = [];
    for (let r = 0; r < n('rounds'); r++) {
      for (const [via, url] of [
        ['direct', fleet.replicas[0]!.url],
        ['nginx', fleet.lb],
      ] as const) {
        const t0 = performance.now();
        const s = await load(url, ms);
        const secs = (performance.now() - t0) / 1000;
        if (s.failed > 0) throw new Error(`${via}: ${s.failed} failed requests: ${s.errors.join('; ')}`);
        rows.push({ via, p50: percentile(s.latencies, 50), p99: percentile(s.latencies, 99), rps: s.requests / secs });
        console.log(
          `round ${r + 1} ${via.padEnd(6)} ${s.requests} requests  ${fmt(rows.at(-1)!.rps)} req/s  p50 ${fmt(rows.at(-1)!.p50)} ms  p99 ${fmt(rows.at(-1)!.p99)} ms`,
        );
      }
    }
    const med = (via: string, k: 'p50' | 'p99' | 'rps') => median(rows.filter((x) => x.via === via).map((x) => x[k]));
    console.log(
      `\nlatency (${n('readers')} readers, medians of ${n('rounds')} rounds): direct to one replica p50 ${fmt(med('direct', 'p50'))} ms p99 ${fmt(med('direct', 'p99'))} ms ${fmt(med('direct', 'rps'))} req/s;` +
        ` through nginx to ${n('replicas')} p50 ${fmt(med('nginx', 'p50'))} ms p99 ${fmt(med('nginx', 'p99'))} ms ${fmt(med('nginx', 'rps'))} req/s` +
        ` (nginx/direct: p50 ${fmt(med('nginx', 'p50') / med('direct', 'p50'))}x, p99 ${fmt(med('nginx', 'p99') / med('direct', 'p99'))}x, throughput ${fmt(med('nginx', 'rps') / med('direct', 'rps'))}x)`,
    );

    const rolls: Array<{ spread: number; failed: number; asset404: number; requests: number; p99: number; tookMs: number }> = [];
    for (let i = 0; i < n('rollouts'); i++) {
      const label = `v${i + 2}`;
      const stop = new AbortController();
      const running = runLoad(fleet.lb, { readers: n('readers'), holdMs: 500, maxMs: 120_000, signal: stop.signal });
      await new Promise((r) => setTimeout(r, 1000));
      const t0 = Date.now();
      await fleet.roll(label);
      let bodies = await Promise.all(fleet.replicas.map((r) => fleet.ready(r.url)));
      while (!bodies.every((b) => b.version === label) && Date.now() - t0 < 60_000) {
        await new Promise((r) => setTimeout(r, 100));
        bodies = await Promise.all(fleet.replicas.map((r) => fleet.ready(r.url)));
      }
      const tookMs = Date.now() - t0;
      await new Promise((r) => setTimeout(r, 1500));
      stop.abort();
      const s = await running;
      const at = bodies.map((b) => (b.follow?.lastSwitch?.version === label ? b.follow.lastSwitch.atMs : NaN));
      const spread = Math.max(...at) - Math.min(...at);
      rolls.push({ spread, failed: s.failed, asset404: s.asset404, requests: s.requests, p99: percentile(s.latencies, 99), tookMs });
      console.log(
        `rollout ${label}: activation → all switched ${tookMs} ms, switch spread ${Number.isNaN(spread) ? 'NOT ALL SWITCHED' : `${spread} ms`}, ${s.requests} requests, ${s.failed} failed, ${s.asset404} asset 404s, p99 ${fmt(rolls.at(-1)!.p99)} ms`,
      );
    }
    const col = (k: 'spread' | 'failed' | 'asset404' | 'p99' | 'tookMs') => rolls.map((r) => r[k]);
    console.log(
      `\nrollouts (${rolls.length}, ${n('replicas')} replicas, ${n('readers')} readers through nginx): switch spread median ${median(col('spread'))} ms, max ${Math.max(...col('spread'))} ms;` +
        ` failed requests total ${col('failed').reduce((a, b) => a + b, 0)}; asset 404s total ${col('asset404').reduce((a, b) => a + b, 0)};` +
        ` activation to all switched median ${median(col('tookMs'))} ms; p99 during rollouts median ${fmt(median(col('p99')))} ms`,
    );
  } finally {
    await fleet.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
