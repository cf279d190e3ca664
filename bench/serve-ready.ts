/**
 * npm run bench:serve-ready [-- --pages 9000 --files 10000 --runs 3 --big-gb 3 --skip big|ready|first --keep]
 *   [--first-runs 5 --before-bin OLD/dist/src/cli/bin.js]
 *
 * Measured on the compiled `airlock serve` (dist), each run a fresh process:
 * 1. ready time of a 10,000-file version: from spawn to the URL on stdout (listening, index
 *    complete), with a cold HTML cache (pages transformed on worker threads) and a warm one (as
 *    left by `airlock import`); medians of `--runs`.
 * 2. a site of several GB (big media files beside the pages) served with --cache-mb 64 while a
 *    bounded client loop fetches many distinct files: the server's peak RSS (VmHWM).
 * 3. (`first`) the first requests right after a start, as after `airlock import --activate` (no
 *    HTML cache, no variants yet: the server builds both in the background): the page, then every
 *    script and stylesheet once, `Accept-Encoding: br, gzip`, one at a time. Bytes on the wire and
 *    time to first byte per request, medians over `--first-runs` fresh processes, against
 *    `--before-bin` (another build of airlock, e.g. before on-request compression) and sirv over
 *    the same site folder (sirv sends precompressed files when they exist: here they do not).
 * The store layout is written directly (manifest + version.json + site), with real variants.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomFillSync } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { mkdir, open, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { generateSite } from '../fixtures/generate.js';
import { buildVariants } from '../src/store/index.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist', 'src', 'cli', 'bin.js');
const { values: args } = parseArgs({
  options: {
    pages: { type: 'string', default: '9000' },
    files: { type: 'string', default: '10000' },
    runs: { type: 'string', default: '3' },
    'big-gb': { type: 'string', default: '3' },
    skip: { type: 'string', default: '' },
    dir: { type: 'string' },
    keep: { type: 'boolean', default: false },
    'first-runs': { type: 'string', default: '5' },
    'before-bin': { type: 'string' },
  },
});
const skip = new Set(args.skip!.split(','));
const work = resolve(args.dir ?? join(ROOT, 'bench/out/serve-ready'));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const mb = (bytes: number) => (bytes / 1048576).toFixed(0);

async function sha256File(path: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(path, { highWaterMark: 1 << 20 })) h.update(c as Buffer);
  return h.digest('hex');
}

/** A version folder in the layout of docs/design.md "src/store", from a site folder already written. */
async function describeVersion(store: string, label: string, pages: number): Promise<{ files: number; bytes: number }> {
  const dir = join(store, 'versions', label);
  const site = join(dir, 'site');
  const paths = (await readdir(site, { recursive: true, encoding: 'utf8' })).sort();
  const files: Array<{ path: string; size: number; sha256: string }> = [];
  for (const p of paths) {
    const s = await stat(join(site, p));
    if (s.isFile()) files.push({ path: p.split('\\').join('/'), size: s.size, sha256: await sha256File(join(site, p)) });
  }
  files.sort((a, b) => (a.path < b.path ? -1 : 1));
  const zero = '0'.repeat(64);
  const bytes = files.reduce((n, f) => n + f.size, 0);
  await writeFile(
    join(dir, 'airlock.json'),
    JSON.stringify({
      format: 'airlock-package/1',
      domain: 'docs.example.com',
      version: label,
      jobId: null,
      createdAt: new Date().toISOString(),
      pageCount: pages,
      archive: { name: 'bundle.tar', format: 'tar', size: 1, sha256: zero },
      files,
    }),
  );
  await writeFile(
    join(dir, 'version.json'),
    JSON.stringify({
      label,
      domain: 'docs.example.com',
      importedAt: new Date().toISOString(),
      packageSha256: zero,
      archive: { name: 'bundle.tar', format: 'tar', offset: 1536, size: 1, sha256: zero },
      signer: null,
      pageCount: pages,
      fileCount: files.length,
      totalBytes: bytes,
    }),
  );
  await writeFile(join(store, 'state.json'), JSON.stringify({ active: label, previous: null, updatedAt: new Date().toISOString() }));
  return { files: files.length, bytes };
}

/** Fill a site up to `total` files with small distinct images, as real exports carry. */
async function pad(site: string, total: number): Promise<void> {
  const have = (await readdir(site, { recursive: true, withFileTypes: true })).filter((d) => d.isFile()).length;
  if (have >= total) return;
  await mkdir(join(site, 'images', 'pad'), { recursive: true });
  for (let i = 0; i < total - have; i++) await writeFile(join(site, 'images', 'pad', `shot-${i}.png`), randomFillSync(Buffer.alloc(2000 + (i % 7) * 500)));
}

interface Served {
  child: ChildProcess;
  url: string;
  ms: number;
  stderr: string[];
}

function serve(store: string, extra: string[] = [], bin = BIN): Promise<Served> {
  const t0 = performance.now();
  const child = spawn(process.execPath, [bin, 'serve', '--store', store, '--port', '0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /^(http:\/\/\S+)\n/m.exec(out);
      if (m) resolve({ child, url: m[1]!.replace(/\/$/, ''), ms: performance.now() - t0, stderr });
    });
    child.once('exit', (code) => reject(new Error(`airlock serve exited (${code}): ${stderr.join('')}`)));
  });
}

async function stop(s: Served): Promise<void> {
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

function fetchLen(url: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    request(url, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
    })
      .on('error', reject)
      .end();
  });
}

const peakRssMb = (pid: number) => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN) / 1024;

async function readyBench(): Promise<void> {
  const store = join(work, 'ready-store');
  const label = 'ready-1';
  const site = join(store, 'versions', label, 'site');
  const pages = Number(args.pages);
  const stamp = join(store, `.made-${pages}-${args.files}`);
  let v: { files: number; bytes: number };
  if (args.keep && (await stat(stamp).catch(() => null))) {
    v = JSON.parse(readFileSync(stamp, 'utf8')) as typeof v; // --keep: reuse the version of an earlier run
  } else {
    await rm(store, { recursive: true, force: true });
    let t = performance.now();
    await generateSite(site, { pages });
    await pad(site, Number(args.files));
    v = await describeVersion(store, label, pages);
    process.stderr.write(`version of ${v.files} files (${mb(v.bytes)} MB, ${pages} pages) written in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
    t = performance.now();
    await buildVariants(store, label);
    process.stderr.write(`variants built in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
    await writeFile(stamp, JSON.stringify(v));
  }

  const runs = Number(args.runs);
  const cold: number[] = [];
  const warm: number[] = [];
  let rss = 0;
  for (let i = 0; i < runs; i++) {
    await rm(join(store, 'versions', label, 'html'), { recursive: true, force: true });
    const s = await serve(store);
    cold.push(s.ms);
    const r = await fetchLen(s.url + '/').finally(() => stop(s));
    if (r.status !== 200) throw new Error(`cold run: / answered ${r.status}`);
    process.stderr.write(`cold ${i + 1}: ${s.ms.toFixed(0)} ms\n`);
  }
  // Serve transforms HTML lazily, in the background: let one server finish the whole cache (its
  // index lists every page) before the warm runs.
  {
    const s = await serve(store);
    const t0 = performance.now();
    try {
      // Complete: the server logs "transformed N HTML page(s)" when its background build is done.
      while (!/transformed \d+ HTML page/.test(s.stderr.join(''))) {
        if (performance.now() - t0 > 600_000) throw new Error('the HTML cache was not complete after 600 s');
        await new Promise((r) => setTimeout(r, 250));
      }
    } finally {
      await stop(s);
    }
    process.stderr.write(`HTML cache of ${pages} pages completed in the background in ${((performance.now() - t0) / 1000).toFixed(1)} s after ready\n`);
  }
  for (let i = 0; i < runs; i++) {
    const s = await serve(store);
    try {
      warm.push(s.ms);
      const r = await fetchLen(s.url + '/');
      if (r.status !== 200 || s.stderr.join('').includes('transformed')) throw new Error(`warm run was not warm: ${r.status} ${s.stderr.join('')}`);
      rss = rssMb(s.child.pid!);
    } finally {
      await stop(s);
    }
    process.stderr.write(`warm ${i + 1}: ${s.ms.toFixed(0)} ms\n`);
  }
  process.stdout.write(`\n| ${v.files} files, ${pages} pages | spawn → listening (median of ${runs}) |\n|---|---:|\n`);
  process.stdout.write(
    `| cold HTML cache (transform on ${'worker threads'}) | ${median(cold).toFixed(0)} ms |\n| warm HTML cache (after airlock import) | ${median(warm).toFixed(0)} ms (target < 1500) |\n`,
  );
  process.stdout.write(`| RSS after load (warm) | ${rss.toFixed(0)} MB |\n`);
}

async function bigBench(): Promise<void> {
  const store = join(work, 'big-store');
  const label = 'big-1';
  const site = join(store, 'versions', label, 'site');
  await rm(store, { recursive: true, force: true });
  const t = performance.now();
  await generateSite(site, { pages: 2000 });
  // Media files of 8 MB (videos, PDFs, archives in real exports) up to --big-gb.
  const count = Math.round((Number(args['big-gb']) * 1024) / 8);
  await mkdir(join(site, 'media'), { recursive: true });
  const chunk = Buffer.alloc(1 << 20);
  for (let i = 0; i < count; i++) {
    const fh = await open(join(site, 'media', `clip-${i}.mp4`), 'w');
    for (let j = 0; j < 8; j++) await fh.write(randomFillSync(chunk));
    await fh.close();
  }
  const v = await describeVersion(store, label, 2000);
  process.stderr.write(`big version of ${v.files} files (${mb(v.bytes)} MB) written in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
  const cold = await serve(store, ['--cache-mb', '64']); // builds the HTML cache (worker threads)
  const coldMs = cold.ms;
  await stop(cold);
  const s = await serve(store, ['--cache-mb', '64']); // a fresh process over the warm cache: serving memory only
  let sampled = 0;
  const sampler = setInterval(() => (sampled = Math.max(sampled, rssMb(s.child.pid!))), 50);
  try {
    const listed = JSON.parse(readFileSync(join(store, 'versions', label, 'airlock.json'), 'utf8')) as { files: Array<{ path: string }> };
    const paths = listed.files.map((f) => '/' + f.path);
    const loaded = rssMb(s.child.pid!);
    // A bounded loop: 16 clients, every file once in random order (pages, assets, media), then
    // 2,000 more random picks; bodies are counted and dropped.
    const order = [...paths].sort(() => Math.random() - 0.5);
    for (let i = 0; i < 2000; i++) order.push(paths[Math.floor(Math.random() * paths.length)]!);
    let next = 0;
    let bytes = 0;
    let errors = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < order.length) {
          const r = await fetchLen(s.url + order[next++]!);
          if (r.status !== 200) errors++;
          bytes += r.bytes;
        }
      }),
    );
    const secs = (performance.now() - t0) / 1000;
    process.stdout.write(`\n| ${v.files} files, ${mb(v.bytes)} MB, --cache-mb 64 | |\n|---|---:|\n`);
    process.stdout.write(
      `| ready: cold HTML cache / warm | ${coldMs.toFixed(0)} ms / ${s.ms.toFixed(0)} ms |\n| RSS after load (warm) | ${loaded.toFixed(0)} MB |\n`,
    );
    process.stdout.write(`| served | ${order.length} requests, ${mb(bytes)} MB in ${secs.toFixed(1)} s, ${errors} errors |\n`);
    process.stdout.write(`| RSS while serving: max of 50 ms samples / peak (VmHWM) | ${sampled.toFixed(0)} MB / ${peakRssMb(s.child.pid!).toFixed(0)} MB |\n`);
  } finally {
    clearInterval(sampler);
    await stop(s);
    await rm(store, { recursive: true, force: true });
  }
}

/** sirv over a site folder, in its own process (as bench/serve.ts runs it). */
function sirvServe(site: string): Promise<Served> {
  const t0 = performance.now();
  const code = `import sirv from 'sirv'; import { createServer } from 'node:http';
const s = createServer(sirv(process.argv[1], { etag: true, extensions: ['html'], brotli: true, gzip: true }));
s.listen(0, '127.0.0.1', () => console.log('http://127.0.0.1:' + s.address().port + '/'));`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code, site], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const stderr: string[] = [];
  child.stderr!.on('data', (c: Buffer) => stderr.push(c.toString()));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (c: Buffer) => {
      const m = /^(http:\/\/\S+)\n/m.exec(c.toString());
      if (m) resolve({ child, url: m[1]!.replace(/\/$/, ''), ms: performance.now() - t0, stderr });
    });
    child.once('exit', (code) => reject(new Error(`sirv exited (${code}): ${stderr.join('')}`)));
  });
}

/** One GET: time to the response head, bytes of the body as sent (not decoded), its coding. */
function timedGet(url: string, headers: Record<string, string>): Promise<{ status: number; ttfb: number; ttlb: number; bytes: number; coding: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    request(url, { headers, agent: false }, (res) => {
      const ttfb = performance.now() - t0;
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, ttfb, ttlb: performance.now() - t0, bytes, coding: String(res.headers['content-encoding'] ?? 'identity') }),
      );
    })
      .on('error', reject)
      .end();
  });
}

async function firstBench(): Promise<void> {
  const store = join(work, 'first-store');
  const label = 'first-1';
  const dir = join(store, 'versions', label);
  await rm(store, { recursive: true, force: true });
  // 60 pages and framework-sized scripts (~300 KB each): the shape of a docs export.
  await generateSite(join(dir, 'site'), { pages: 60, assetBytes: 300_000 });
  // The generated framework chunk compresses ~25×; a real bundle (ajv's, 273 KB, from
  // node_modules) compresses like production code. Left out when it is not installed.
  const real = join(ROOT, 'node_modules', 'ajv', 'dist', 'ajv.bundle.js');
  const realJs = await readFile(real).catch(() => null);
  if (realJs)
    await writeFile(join(dir, 'site', '_next', 'static', 'chunks', `vendor-${createHash('sha256').update(realJs).digest('hex').slice(0, 8)}.js`), realJs);
  const v = await describeVersion(store, label, 60);
  const listed = JSON.parse(readFileSync(join(dir, 'airlock.json'), 'utf8')) as { files: Array<{ path: string; size: number }> };
  const assetFiles = listed.files.filter((f) => /\.(js|css)$/.test(f.path));
  const assets = assetFiles.map((f) => f.path);
  const eligible = 1 + assetFiles.filter((f) => f.size >= 1024).length; // the page, and what is worth compressing
  const paths = ['/', ...assets.map((p) => '/' + p)];
  const ae = { 'accept-encoding': 'br, gzip' };
  const runs = Number(args['first-runs']);
  const servers: Array<{ name: string; start: () => Promise<Served> }> = [
    { name: 'airlock (this build)', start: () => serve(store) },
    ...(args['before-bin'] ? [{ name: 'airlock (--before-bin)', start: () => serve(store, [], resolve(args['before-bin']!)) }] : []),
    { name: 'sirv (no .br/.gz files)', start: () => sirvServe(join(dir, 'site')) },
  ];
  const rows: Record<string, { ttfb: number[]; assetTtfb: number[]; bigTtfb: number[]; bigTtlb: number[]; bytes: number[]; compressed: number[] }> = {};
  const big = new Set(assetFiles.filter((f) => f.size >= 100 * 1024).map((f) => '/' + f.path));
  const load0 = (await import('node:os')).loadavg();
  for (let i = 0; i < runs; i++) {
    for (const s of servers) {
      // interleaved: each round runs every server once
      await rm(join(dir, 'variants'), { recursive: true, force: true });
      await rm(join(dir, 'html'), { recursive: true, force: true });
      const srv = await s.start();
      const row = (rows[s.name] ??= { ttfb: [], assetTtfb: [], bigTtfb: [], bigTtlb: [], bytes: [], compressed: [] });
      try {
        const results = [];
        for (const p of paths) results.push(await timedGet(srv.url + p, ae));
        if (results.some((r) => r.status !== 200)) throw new Error(`${s.name}: ${results.map((r) => r.status).join(',')}`);
        process.stderr.write(
          `${s.name} run ${i + 1}: ${results.map((r, j) => `${paths[j]!.slice(-22)} ${r.coding} ${r.bytes} B ${r.ttfb.toFixed(1)} ms`).join('; ')}\n`,
        );
        row.ttfb.push(median(results.map((r) => r.ttfb)));
        row.assetTtfb.push(median(results.slice(1).map((r) => r.ttfb)));
        row.bigTtfb.push(...results.filter((_, j) => big.has(paths[j]!)).map((r) => r.ttfb));
        row.bigTtlb.push(...results.filter((_, j) => big.has(paths[j]!)).map((r) => r.ttlb));
        row.bytes.push(results.reduce((n, r) => n + r.bytes, 0));
        row.compressed.push(results.filter((r) => r.coding !== 'identity').length);
      } finally {
        await stop(srv);
      }
    }
  }
  const load1 = (await import('node:os')).loadavg();
  const kb = (b: number) => `${(b / 1024).toFixed(0)} KB`;
  const assetBytes = assetFiles.reduce((n, f) => n + f.size, 0);
  process.stdout.write(
    `\n| first ${paths.length} requests after a start (${v.files}-file site, page + ${assets.length} scripts/stylesheets = ${kb(assetBytes)} identity; medians of ${runs}) | compressed / worth it (≥ 1 KB) | bytes sent | TTFB median (all) | TTFB median (assets) | ${big.size} scripts ≥ 100 KB: TTFB / last byte (loopback) |\n|---|---:|---:|---:|---:|---:|\n`,
  );
  for (const [name, r] of Object.entries(rows)) {
    process.stdout.write(
      `| ${name} | ${median(r.compressed)}/${eligible} | ${kb(median(r.bytes))} | ${median(r.ttfb).toFixed(1)} ms | ${median(r.assetTtfb).toFixed(1)} ms | ${median(r.bigTtfb).toFixed(1)} ms / ${median(r.bigTtlb).toFixed(1)} ms |\n`,
    );
  }
  process.stdout.write(`load average (1 min) before / after: ${load0[0]!.toFixed(2)} / ${load1[0]!.toFixed(2)}\n`);
  await rm(store, { recursive: true, force: true });
}

async function main(): Promise<void> {
  await mkdir(work, { recursive: true });
  try {
    if (!skip.has('first')) await firstBench();
    if (!skip.has('ready')) await readyBench();
    if (!skip.has('big')) await bigBench();
  } finally {
    if (!args.keep) await rm(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`bench:serve-ready failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exitCode = 1;
});
