/**
 * npm run bench:library [-- --sites 1,50,500 --duration 5 --pairs 5 --paired-rounds 3 --starts 5 --concurrency 2]
 *
 * `airlock serve --library LIB` with 1, 50 and 500 sites (generated: 100 HTML pages of 5-15 KB and
 * a stylesheet each, the text, titles, links and styles varying per site), each site packed,
 * signed and imported with the built CLI as an operator does (`airlock pack`, `airlock import
 * --library LIB --trust K.pub --activate --prepare-html --precompress`: HTML transformed and
 * assets compressed at import, so a server has no background work), 2 imports at a time. The
 * 500-site library is imported once; the 50- and 1-site libraries are `cp -a` of its first 50 / 1
 * site folders (a store is self-contained; a library ignores symlinked entries).
 * For each library size:
 * 1. start-up: spawn of `serve --library` to its URL on stdout and `/_airlock/health` answering
 *    200, a fresh process each time, median of `--starts` (goal ≤ 2 s at 500 sites);
 * 2. memory: VmRSS of the server process (/proc/PID/status) at rest after start (no site opened,
 *    polled until stable), then every site opened once (one request each for its home page, by
 *    Host), polled again until stable: RSS per idle site = (after − at rest) / sites (goal ≤ 2 MB);
 * 3. search across every site: see searchPhase.
 * 4. throughput: a hot ~10 KB page of the first site, requested by Host through a library server
 *    (every site open), against the first site's store served alone (`serve --store LIB/DOMAIN`,
 *    the peer), both loaded at the same moment, so each run's ratio is the two servers' cost per
 *    request whatever the host does. `--pairs` fresh pairs of servers, each pair given the same
 *    history first: the library every site opened and the searches its readers make (across every
 *    site, then the first site's own), the peer the first site's own searches. Each pair runs
 *    `--paired-rounds` runs as started, then both go through the same 30 full garbage collections
 *    (age-heap.mjs, preloaded in both: it says why) and run again; the aged runs also give each
 *    server's CPU time a request (user + system of every thread of the process, /proc/PID/stat,
 *    over the requests wrk counted): the same cost, whatever share of the core each server got.
 *    A pair's figure is the median of its runs, a size's the median over its pairs: a server
 *    process settles in a faster or a slower state and stays there, so runs of one pair agree
 *    while pairs do not, and one pair decides nothing (goal ≥ 0.95, judged on the aged columns).
 * Servers pinned to core 0 (taskset), the load generator (wrk, autocannon where wrk is absent) to
 * core 1: 50 keep-alive connections. Everything is written under one temporary folder, removed at
 * the end (bench/settle.ts records the mass delete for the next benchmark).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { create as tarCreate } from 'tar';
import { createRng } from '../fixtures/prng.js';
import { procStat } from '../src/store/proc.js';
import { remove } from './settle.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const BIN = join(HERE, '..', 'dist', 'src', 'cli', 'bin.js');
/** Node flags of the two servers whose throughput is compared: a preload that ages the heap on SIGUSR2 (see age-heap.mjs). */
const AGEABLE = ['--expose-gc', '--import', join(HERE, 'age-heap.mjs')];
const { values: args } = parseArgs({
  options: {
    sites: { type: 'string', default: '1,50,500' },
    duration: { type: 'string', default: '5' },
    pairs: { type: 'string', default: '5' },
    starts: { type: 'string', default: '5' },
    pages: { type: 'string', default: '100' },
    concurrency: { type: 'string', default: '2' },
    'paired-rounds': { type: 'string', default: '3' },
  },
});
const siteCounts = args
  .sites!.split(',')
  .map(Number)
  .sort((a, b) => a - b);
const seconds = Number(args.duration);
const pairs = Number(args.pairs);
const starts = Number(args.starts);
const pairedRounds = Number(args['paired-rounds']);
const pagesPerSite = Number(args.pages);
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const domainOf = (i: number) => `docs-${String(i + 1).padStart(3, '0')}.library.example`;

// ---- the sites -----------------------------------------------------------------------------------
const WORDS = (
  'install configure server client request response cache token version release upgrade rollback ' +
  'cluster node replica volume backup restore policy audit signature key trust import export archive ' +
  'package mirror index search query result page guide tutorial reference api endpoint schema field ' +
  'value default option flag command script deploy network proxy gateway certificate secret storage ' +
  'database table column migration schedule worker queue event stream metric alert dashboard log ' +
  'error warning retry timeout limit quota region zone account project team role permission user'
).split(' ');

/** One site: `pages` HTML pages of 5-15 KB and a stylesheet, all varying with the site's index. */
async function writeSite(dir: string, site: number, pages: number): Promise<void> {
  const rng = createRng((site + 1) * 7919);
  const int = (n: number) => Math.floor(rng.next() * n);
  const pick = () => WORDS[int(WORDS.length)]!;
  const sentence = () => {
    const n = 8 + int(14);
    const w = Array.from({ length: n }, pick);
    return w[0]![0]!.toUpperCase() + w.join(' ').slice(1) + '.';
  };
  const product = `${pick()}-${pick()} ${site + 1}`;
  const titles = Array.from({ length: pages }, (_, i) => (i === 0 ? `${product} documentation` : `${pick()} ${pick()} (${product})`));
  const url = (i: number) => (i === 0 ? '/' : `/guide/page-${i}`);
  const hue = int(360);
  await mkdir(join(dir, 'guide'), { recursive: true });
  await writeFile(
    join(dir, 'style.css'),
    `:root{--accent:hsl(${hue} 60% 40%);--bg:hsl(${hue} 20% 98%)}\nbody{font:16px/1.5 system-ui,sans-serif;margin:0;background:var(--bg)}\n` +
      Array.from({ length: 40 + int(40) }, (_, i) => `.${pick()}-${i}{color:hsl(${int(360)} 50% 30%);margin:${int(24)}px ${int(24)}px}`).join('\n') +
      '\n',
  );
  for (let i = 0; i < pages; i++) {
    const target = 5_000 + int(10_000);
    const nav = Array.from({ length: 12 }, () => int(pages))
      .map((j) => `<li><a href="${url(j)}">${titles[j]}</a></li>`)
      .join('');
    let body = '';
    while (body.length < target - 1_500) {
      body += `<h2 id="s${body.length}">${sentence().slice(0, 40)}</h2>\n<p>${sentence()} ${sentence()} ${sentence()}</p>\n`;
      if (int(4) === 0) body += `<pre><code>airlock ${pick()} --${pick()} ${pick()}-${int(1000)}</code></pre>\n`;
    }
    const html =
      `<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>${titles[i]}</title>` +
      `<link rel="stylesheet" href="/style.css"><link rel="canonical" href="https://${domainOf(site)}${url(i)}"></head>\n` +
      `<body><header><a href="/">${product}</a></header><nav><ul>${nav}</ul></nav>\n<main><h1>${titles[i]}</h1>\n${body}</main></body></html>\n`;
    await writeFile(join(dir, i === 0 ? 'index.html' : `guide/page-${i}.html`), html);
  }
}

function run(argv: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.on('error', reject).on('close', (code) => (code === 0 ? resolve() : reject(new Error(`airlock ${argv[0]} exited ${code}: ${err}`))));
  });
}

/** Generate, tar, pack (signed) and import `count` sites into `lib`, `concurrency` at a time. */
async function buildLibrary(work: string, lib: string, count: number): Promise<void> {
  const key = join(work, 'vendor');
  await run(['keygen', '--out', key]);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const dir = join(work, 'src', domainOf(i));
      await writeSite(dir, i, pagesPerSite);
      const files = (await readdir(dir, { recursive: true, encoding: 'utf8' })).filter((p) => p.endsWith('.html') || p.endsWith('.css'));
      const archive = join(work, 'src', `${domainOf(i)}.tar.gz`);
      await tarCreate({ gzip: true, file: archive, cwd: dir, portable: true }, files);
      const out = join(work, 'pk');
      await run(['pack', archive, '--domain', domainOf(i), '--version-label', 'v1', '--sign-key', `${key}.key`, '--out', out]);
      await run(['import', join(out, `${domainOf(i)}-v1.airlock`), '--library', lib, '--trust', `${key}.pub`, '--activate', '--prepare-html', '--precompress']);
      if (++done % 50 === 0 || done === count) process.stderr.write(`imported ${done}/${count} sites\n`);
    }
  };
  await Promise.all(Array.from({ length: Number(args.concurrency) }, worker));
}

// ---- servers and load ------------------------------------------------------------------------------
const pinned = (core: number, cmd: string, argv: string[]) =>
  hasCmd('taskset') && cpus().length > 1 ? (['taskset', ['-c', String(core), cmd, ...argv]] as const) : ([cmd, argv] as const);
function hasCmd(name: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${name}`]).status === 0;
}

function get(url: string, host?: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    request(url, { agent: false, headers: host ? { host } : {} }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    })
      .on('error', reject)
      .end();
  });
}

interface Server {
  child: ChildProcess;
  pid: number;
  url: string;
  readyMs: number;
  /** Everything it printed on stdout so far. */
  stdout: () => string;
}

/** Spawn a server pinned to core 0; ready when it printed its URL and /_airlock/health answers 200. */
async function startServer(argv: string[], nodeFlags: string[] = []): Promise<Server> {
  const t0 = performance.now();
  const [c, a] = pinned(0, process.execPath, [...nodeFlags, BIN, 'serve', ...argv, '--port', '0']);
  const child = spawn(c, a, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /https?:\/\/[^\s]+/.exec(out);
      if (m) resolve(m[0].replace(/\/$/, ''));
    });
    child.once('exit', (code) => reject(new Error(`serve ${argv.join(' ')} exited ${code} before printing its URL`)));
  });
  for (;;) {
    try {
      if ((await get(`${url}/_airlock/health`)).status === 200) break;
    } catch {
      /* not yet */
    }
    if (performance.now() - t0 > 60_000) throw new Error(`${url}/_airlock/health never answered 200`);
    await sleep(10);
  }
  // taskset execs node in place, so the child's pid is the server's.
  return { child, pid: child.pid!, url, readyMs: performance.now() - t0, stdout: () => out };
}

function stop(s: Server): Promise<void> {
  if (s.child.exitCode !== null) return Promise.resolve();
  return new Promise((r) => {
    s.child.once('exit', () => r());
    s.child.kill('SIGTERM');
  });
}

/** CPU time (user + system, every thread) a process has used, in ms: /proc/PID/stat, after its name. */
const TICK_MS = 1000 / (Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100);
const cpuMs = (pid: number) => {
  const f = procStat(pid); // utime, stime: proc(5) fields 14 and 15
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
};
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

/** Poll VmRSS every 500 ms until it moves by less than 1 % over 2 s, at most `maxMs`. */
async function stableRss(pid: number, maxMs = 20_000): Promise<number> {
  const t0 = Date.now();
  const samples: number[] = [rssKb(pid)];
  for (;;) {
    await sleep(500);
    samples.push(rssKb(pid));
    const last = samples.slice(-5);
    if (last.length === 5 && Math.max(...last) - Math.min(...last) < 0.01 * Math.max(...last)) return samples.at(-1)!;
    if (Date.now() - t0 > maxMs) return samples.at(-1)!;
  }
}

type Load = { rps: number; requests: number; p99ms: number; errors: number };

function capture(cmd: string, argv: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.on('error', reject).on('close', () => resolve(out));
  });
}

async function runLoad(url: string, host: string | null, secs: number): Promise<Load> {
  if (hasCmd('wrk')) {
    const [cmd, argv] = pinned(1, 'wrk', ['-t1', '-c50', `-d${secs}s`, '--latency', ...(host ? ['-H', `Host: ${host}`] : []), url]);
    const out = await capture(cmd, argv);
    const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(out)?.[1] ?? 0);
    const p99 = /\s99%\s+([\d.]+)(us|ms|s)/.exec(out);
    const p99ms = p99 ? Number(p99[1]) * (p99[2] === 'us' ? 0.001 : p99[2] === 's' ? 1000 : 1) : NaN;
    const errs = /Non-2xx or 3xx responses: (\d+)/.exec(out);
    const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
    const requests = Number(/(\d+) requests in/.exec(out)?.[1] ?? 0);
    return { rps, requests, p99ms, errors: Number(errs?.[1] ?? 0) + (sock ? sock.slice(1).reduce((n, x) => n + Number(x), 0) : 0) };
  }
  const [cmd, argv] = pinned(1, 'npx', ['--yes', 'autocannon', '-c', '50', '-d', String(secs), '-j', ...(host ? ['-H', `host=${host}`] : []), url]);
  const j = JSON.parse(await capture(cmd, argv)) as { requests: { average: number; total: number }; latency: { p99: number }; non2xx: number; errors: number };
  return { rps: j.requests.average, requests: j.requests.total, p99ms: j.latency.p99, errors: j.non2xx + j.errors };
}

// ---- the driver ------------------------------------------------------------------------------------
interface SearchRow {
  /** From the first search across every site until one answered with none pending (indexes built at their first search). */
  coldMs: number;
  /** Searches across every site, all indexes loaded: one at a time. */
  warm: number[];
  /** The same queries asked of each site's own search, one site after another (a client without the library's search). */
  oneByOne: number[];
  /** Under a mix of searches across sites and readers' searches of single sites. */
  mixed: { across: number; acrossPending: number; acrossBusy: number; own: number; ownNot200: number };
  /** Mean size of a site's search index file. */
  indexKb: number;
}

/** One pair of fresh servers: the medians of its runs. */
interface Pair {
  /** Library ÷ peer req/s, both loaded at once, as started. */
  paired: number;
  /** The same once both went through the same 30 full collections (age-heap.mjs). */
  aged: number;
  /** The aged runs as CPU time a request (the whole server process: /proc/PID/stat), peer ÷ library. */
  agedCpu: number;
  libUs: number;
  peerUs: number;
  lib: Load;
  peer: Load;
  /** The library's RSS after its history and load, in MB. */
  libRssMb: number;
  /** Non-2xx answers and socket errors over every run of the pair, both servers. */
  errors: number;
}

interface Row {
  search: SearchRow;
  sites: number;
  startMs: number[];
  restMb: number;
  openMb: number;
  perSiteMb: number;
  pairs: Pair[];
}

const QUERIES = [
  'rollback',
  'certificate secret',
  'replica volume',
  'migration',
  'token',
  'upgrade cluster',
  'dashboard alert',
  'schema field',
  'proxy gateway',
  'audit log',
];

async function postJson(url: string, body: unknown): Promise<{ status: number; ms: number; json: { sites?: unknown[]; pending?: string[] } }> {
  const t = performance.now();
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await r.json()) as { sites?: unknown[]; pending?: string[] };
  return { status: r.status, ms: performance.now() - t, json };
}

/** Search across every site until an answer has no site pending (each index loaded at its first search); the time it took. */
async function acrossSettled(url: string): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const a = await postJson(`${url}/_airlock/library/search`, { query: 'install' });
    if (a.status === 200 && a.json.pending!.length === 0) return performance.now() - t0;
    if (performance.now() - t0 > 900_000) throw new Error('search across sites: still pending after 15 minutes');
  }
}

/**
 * What a server of a throughput pair serves before it is measured: the searches its readers make.
 * The library: every query across every site, then of the first site's own search; the store alone
 * (`library` false): the first site's own search. A 503 (index still loading) is asked again.
 */
async function searchHistory(url: string, first: string, library: boolean): Promise<void> {
  if (library) {
    await acrossSettled(url);
    for (const q of QUERIES) {
      const a = await postJson(`${url}/_airlock/library/search`, { query: q });
      if (a.status !== 200) throw new Error(`search across sites for ${q} answered ${a.status}`);
    }
  }
  const own = library ? `${url}/${first}/_airlock/search/${first}` : `${url}/_airlock/search/${first}`;
  const t0 = performance.now();
  for (const q of QUERIES)
    for (;;) {
      const r = await postJson(own, { query: q });
      if (r.status === 200) break;
      if (r.status !== 503 || performance.now() - t0 > 120_000) throw new Error(`${own} answered ${r.status} for ${q}`);
      await sleep(100);
    }
}

/**
 * 3. search across every site of the library (`POST /_airlock/library/search`): cold (each site's
 * index built at its first search), then warm one at a time, beside the same queries asked of each
 * site's own search one site after another; then 5 s of 2 clients searching across sites beside 8
 * readers searching single sites, counting answers with sites pending, busy (503) or not 200.
 */
async function searchPhase(url: string, lib: string, sites: string[]): Promise<SearchRow> {
  const across = (query: string) => postJson(`${url}/_airlock/library/search`, { query });
  const own = (d: string, query: string) => postJson(`${url}/${d}/_airlock/search/${d}`, { query });
  const coldMs = await acrossSettled(url);
  const warm: number[] = [];
  for (let k = 0; k < 3; k++)
    for (const q of QUERIES) {
      const a = await across(q);
      if (a.status !== 200 || a.json.pending!.length > 0) throw new Error(`warm search across sites for ${q}: ${a.status}, ${a.json.pending?.length} pending`);
      warm.push(a.ms);
    }
  const oneByOne: number[] = [];
  for (const q of QUERIES.slice(0, 5)) {
    const t = performance.now();
    for (const d of sites) {
      const r = await own(d, q);
      if (r.status !== 200) throw new Error(`${d}'s own search answered ${r.status}`);
    }
    oneByOne.push(performance.now() - t);
  }
  const mixed = { across: 0, acrossPending: 0, acrossBusy: 0, own: 0, ownNot200: 0 };
  const end = performance.now() + 5_000;
  let i = 0;
  const acrossLoop = async () => {
    while (performance.now() < end) {
      const a = await across(QUERIES[i++ % QUERIES.length]!);
      mixed.across++;
      if (a.status === 503) mixed.acrossBusy++;
      else if (a.json.pending!.length > 0) mixed.acrossPending++;
    }
  };
  const ownLoop = async () => {
    while (performance.now() < end) {
      const r = await own(sites[i++ % sites.length]!, QUERIES[i % QUERIES.length]!);
      mixed.own++;
      if (r.status !== 200) mixed.ownNot200++;
    }
  };
  await Promise.all([acrossLoop(), acrossLoop(), ...Array.from({ length: 8 }, ownLoop)]);
  const sizes = await Promise.all(sites.map((d) => stat(join(lib, d, 'versions', 'v1', 'search', 'index.json')).then((x) => x.size)));
  return { coldMs, warm, oneByOne, mixed, indexKb: sizes.reduce((a, b) => a + b, 0) / sizes.length / 1024 };
}

/**
 * 4. one pair of fresh servers: the library (every site opened, its readers' searches) and the
 * first site's store alone (its own searches), the hot page loaded on both at the same moment
 * (both servers on core 0, two wrk on core 1), as started and again once both are aged.
 */
async function throughputPair(p: { n: number; k: number; lib: string; sites: string[]; first: string; hotUrl: string; servers: Server[] }): Promise<Pair> {
  const { n, k, first, hotUrl } = p;
  const srv = await startServer(['--library', p.lib], AGEABLE);
  p.servers.push(srv);
  for (const d of p.sites) {
    const r = await get(`${srv.url}/`, d);
    if (r.status !== 200) throw new Error(`${d}/ answered ${r.status} through the library`);
  }
  const peer = await startServer(['--store', join(p.lib, first)], AGEABLE);
  p.servers.push(peer);
  await searchHistory(srv.url, first, true);
  await searchHistory(peer.url, first, false);
  await Promise.all([stableRss(srv.pid), stableRss(peer.pid)]);
  const check = [await get(srv.url + hotUrl, first), await get(peer.url + hotUrl)];
  if (check.some((c) => c.status !== 200) || check[0]!.bytes !== check[1]!.bytes)
    throw new Error(`hot page: library ${check[0]!.status} ${check[0]!.bytes} B, peer ${check[1]!.status} ${check[1]!.bytes} B`);
  const targets: Array<[string, string | null]> = [
    [srv.url + hotUrl, first],
    [peer.url + hotUrl, null],
  ];
  const runs = async (said: string) => {
    const out: Array<{ ratio: number; cpu: number; libUs: number; peerUs: number; lib: Load; peer: Load }> = [];
    for (let round = 1; round <= pairedRounds; round++) {
      const both = (secs: number) => Promise.all(targets.map(([url, host]) => runLoad(url, host, secs)));
      await both(1); // warm-up
      const cpu0 = [cpuMs(srv.pid), cpuMs(peer.pid)];
      const [l, q] = await both(seconds);
      const [libUs, peerUs] = [((cpuMs(srv.pid) - cpu0[0]!) * 1000) / l!.requests, ((cpuMs(peer.pid) - cpu0[1]!) * 1000) / q!.requests];
      out.push({ ratio: l!.rps / q!.rps, cpu: peerUs / libUs, libUs, peerUs, lib: l!, peer: q! });
      process.stderr.write(
        `${n} sites pair ${k} run ${round}${said}: library ${l!.rps.toFixed(0)} req/s beside peer ${q!.rps.toFixed(0)} req/s; ` +
          `CPU a request ${libUs.toFixed(1)} µs beside ${peerUs.toFixed(1)} µs\n`,
      );
    }
    return out;
  };
  const started = await runs('');
  // Both through the same full collections, idle, after serving the hot page (the state a
  // long-running server stays in; age-heap.mjs says why); a big heap's collections take longer
  // than their spacing, so wait for each to say it is done.
  for (const s of [srv, peer]) s.child.kill('SIGUSR2');
  const agedBy = Date.now() + 300_000;
  for (const s of [srv, peer])
    while (!s.stdout().includes('airlock-bench: aged\n')) {
      if (Date.now() > agedBy) throw new Error('a server did not finish its 30 collections in 5 minutes');
      await sleep(100);
    }
  await sleep(1000);
  const aged = await runs(', both aged');
  const libRssMb = rssKb(srv.pid) / 1024;
  await stop(srv);
  await stop(peer);
  const mid = <T>(xs: T[], by: (x: T) => number) => [...xs].sort((a, b) => by(a) - by(b))[Math.floor(xs.length / 2)]!;
  const pair: Pair = {
    paired: median(started.map((r) => r.ratio)),
    aged: median(aged.map((r) => r.ratio)),
    agedCpu: median(aged.map((r) => r.cpu)),
    libUs: median(aged.map((r) => r.libUs)),
    peerUs: median(aged.map((r) => r.peerUs)),
    lib: mid(aged, (r) => r.lib.rps).lib,
    peer: mid(aged, (r) => r.peer.rps).peer,
    libRssMb,
    errors: [...started, ...aged].reduce((a, r) => a + r.lib.errors + r.peer.errors, 0),
  };
  process.stderr.write(
    `${n} sites pair ${k}: paired ${pair.paired.toFixed(3)}×, aged ${pair.aged.toFixed(3)}×, CPU a request ${pair.agedCpu.toFixed(3)}× ` +
      `(${pair.libUs.toFixed(1)} µs beside ${pair.peerUs.toFixed(1)} µs); library RSS after load ${libRssMb.toFixed(1)} MB\n`,
  );
  return pair;
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'airlock-bench-library-'));
  const servers: Server[] = [];
  const rows: Row[] = [];
  try {
    const max = siteCounts.at(-1)!;
    const full = join(work, `lib-${max}`);
    const t0 = Date.now();
    await buildLibrary(work, full, max);
    process.stderr.write(`${max} sites of ${pagesPerSite} pages imported in ${((Date.now() - t0) / 1000).toFixed(0)} s\n`);
    const names = (await readdir(full)).sort();
    const libs = new Map<number, string>([[max, full]]);
    for (const n of siteCounts.slice(0, -1)) {
      const lib = join(work, `lib-${n}`);
      await mkdir(lib);
      spawnSync('cp', ['-a', ...names.slice(0, n).map((d) => join(full, d)), lib]);
      libs.set(n, lib);
    }
    // The hot page: the first site's page nearest 10 KB (every library holds the first site).
    const first = names[0]!;
    const siteDir = join(work, 'src', first);
    const pages = (await readdir(siteDir, { recursive: true, encoding: 'utf8' })).filter((p) => p.endsWith('.html'));
    const sized = await Promise.all(pages.map(async (p) => ({ p, size: (await stat(join(siteDir, p))).size })));
    const hot = sized.reduce((a, b) => (Math.abs(b.size - 10_000) < Math.abs(a.size - 10_000) ? b : a));
    const hotUrl = '/' + hot.p.replace(/\.html$/, '').replace(/(^|\/)index$/, '$1');
    process.stderr.write(`hot page: ${first}${hotUrl} (${hot.size} bytes of source HTML)\n`);

    for (const n of siteCounts) {
      const lib = libs.get(n)!;
      const sites = names.slice(0, n);
      // 1. start-up, fresh processes
      const startMs: number[] = [];
      for (let s = 0; s < starts; s++) {
        const srv = await startServer(['--library', lib]);
        startMs.push(srv.readyMs);
        await stop(srv);
      }
      process.stderr.write(`${n} sites: start-up ${startMs.map((x) => x.toFixed(0)).join(', ')} ms\n`);
      // 2. memory
      const srv = await startServer(['--library', lib], AGEABLE);
      servers.push(srv);
      const rest = await stableRss(srv.pid);
      for (const d of sites) {
        const r = await get(`${srv.url}/`, d);
        if (r.status !== 200) throw new Error(`${d}/ answered ${r.status} through the library`);
      }
      const open = await stableRss(srv.pid);
      const perSite = (open - rest) / 1024 / n;
      process.stderr.write(
        `${n} sites: RSS at rest ${(rest / 1024).toFixed(1)} MB, every site opened ${(open / 1024).toFixed(1)} MB: ${perSite.toFixed(2)} MB per site\n`,
      );
      const search = await searchPhase(srv.url, lib, sites);
      process.stderr.write(
        `${n} sites: search across all: cold ${(search.coldMs / 1000).toFixed(1)} s, warm median ${median(search.warm).toFixed(1)} ms; ` +
          `each site's own search one after another ${median(search.oneByOne).toFixed(1)} ms; mixed ${JSON.stringify(search.mixed)}; index ${search.indexKb.toFixed(0)} KB a site\n`,
      );
      await stop(srv);
      const row: Row = { search, sites: n, startMs, restMb: rest / 1024, openMb: open / 1024, perSiteMb: perSite, pairs: [] };
      for (let k = 1; k <= pairs; k++) row.pairs.push(await throughputPair({ n, k, lib, sites, first, hotUrl, servers }));
      rows.push(row);
    }
  } finally {
    for (const s of servers) if (s.child.exitCode === null) s.child.kill('SIGTERM');
    await sleep(300);
    await remove(work);
  }
  const f0 = (x: number) => x.toLocaleString('en-US', { maximumFractionDigits: 0 });
  const listed = (xs: number[]) => `${median(xs).toFixed(3)}× (${xs.map((x) => x.toFixed(3)).join(', ')})`;
  process.stdout.write(
    `\n| sites | start-up ms (median; min–max) | RSS at rest | all sites opened | per idle site | library req/s | p99 | peer req/s | p99 | paired (each pair) | paired, both aged | CPU a request, peer ÷ library | library, peer µs a request | errors |\n` +
      `|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n`,
  );
  for (const r of rows) {
    const ps = r.pairs;
    process.stdout.write(
      `| ${r.sites} | ${f0(median(r.startMs))} (${f0(Math.min(...r.startMs))}–${f0(Math.max(...r.startMs))}) | ${r.restMb.toFixed(1)} MB | ${r.openMb.toFixed(1)} MB | ` +
        `${r.perSiteMb.toFixed(2)} MB | ${f0(median(ps.map((x) => x.lib.rps)))} | ${median(ps.map((x) => x.lib.p99ms)).toFixed(2)} ms | ` +
        `${f0(median(ps.map((x) => x.peer.rps)))} | ${median(ps.map((x) => x.peer.p99ms)).toFixed(2)} ms | ` +
        `${listed(ps.map((x) => x.paired))} | ${listed(ps.map((x) => x.aged))} | ${listed(ps.map((x) => x.agedCpu))} | ` +
        `${median(ps.map((x) => x.libUs)).toFixed(1)}, ${median(ps.map((x) => x.peerUs)).toFixed(1)} | ${ps.reduce((a, x) => a + x.errors, 0)} |\n`,
    );
  }
  const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))]!;
  process.stdout.write(
    `\n| sites | search across all, cold | warm, median (p95) | each site's own search, one after another | mixed: across (pending, 503) | mixed: single-site (not 200) | index a site |\n` +
      `|---:|---:|---:|---:|---:|---:|---:|\n`,
  );
  for (const { sites, search: s } of rows)
    process.stdout.write(
      `| ${sites} | ${(s.coldMs / 1000).toFixed(1)} s | ${median(s.warm).toFixed(1)} ms (${p95(s.warm).toFixed(1)}) | ${median(s.oneByOne).toFixed(1)} ms | ` +
        `${s.mixed.across} (${s.mixed.acrossPending}, ${s.mixed.acrossBusy}) | ${s.mixed.own} (${s.mixed.ownNot200}) | ${s.indexKb.toFixed(0)} KB |\n`,
    );
  process.stdout.write(
    `\n(${pagesPerSite} pages a site; start-up: medians of ${starts} fresh starts; throughput: ${pairs} fresh pairs of servers, each ${pairedRounds} runs of ${seconds} s loading both at once, as started and again after both went through 30 full collections; a pair's figure is the median of its runs, a size's the median over pairs; req/s, p99 and µs are of the aged runs; ` +
      `50 connections, server on core 0, ${hasCmd('wrk') ? 'wrk' : 'autocannon'} on core 1; goals: start-up ≤ 2 s at 500 sites, ≤ 2 MB per idle site, library ≥ 0.95× the store alone)\n`,
  );
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:library failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
