/**
 * `npm run bench:fetch` (fetch speed): the emulator serves a generated export archive over
 * loopback; `airlock fetch` (the compiled CLI in a child process: download + sha256/md5 as bytes
 * land + fsync, then scanArchive and the package write) against `curl -s -o FILE` of a fresh link
 * to the same object, in the same run. Reports medians of N runs: curl's time, airlock's download
 * phase, its whole fetch, the throughput ratio (target >= 0.9x curl) and airlock's peak RSS (maxRSS
 * from /usr/bin/time; target <= 150 MB, flat from 100 MB to 1 GB).
 *   node --import tsx bench/fetch.ts [--sizes 100,1000] [--runs 3] [--dir DIR]
 * Needs `npm run build` first. Archives are cached in bench/out/fetch (gitignored).
 */
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { randomBytes } from 'node:crypto';
import { createGzip } from 'node:zlib';
import { once } from 'node:events';
import { ServiceClient } from '../src/upstream/index.js';
import { waitForJob } from '../src/fetch/poll.js';
import { tarHeader } from '../test/helpers/evil-archives.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist/src/cli/bin.js');
const { values } = parseArgs({ options: { sizes: { type: 'string', default: '100,1000' }, runs: { type: 'string', default: '3' }, dir: { type: 'string' } } });
const runs = Number(values.runs);
const work = resolve(values.dir ?? join(ROOT, 'bench/out/fetch'));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const MB = 1024 * 1024;

/**
 * A valid tar.gz of about `mb` MiB: an index.html and 16 MiB files of random bytes (gzip level 1
 * cannot shrink them, so the archive size is the download size; the content is a real site).
 */
async function generate(mb: number, path: string): Promise<void> {
  if (existsSync(path)) return;
  process.stderr.write(`generating ${path}...\n`);
  const gz = createGzip({ level: 1 });
  const out = createWriteStream(path + '.tmp');
  gz.pipe(out);
  const write = async (b: Buffer) => {
    if (!gz.write(b)) await once(gz, 'drain');
  };
  const pad = (n: number) => Buffer.alloc((512 - (n % 512)) % 512);
  const index = Buffer.from('<!doctype html><title>bench</title><h1>bench</h1>');
  await write(tarHeader({ name: 'site/index.html', size: index.length }));
  await write(Buffer.concat([index, pad(index.length)]));
  const fileBytes = 16 * MB;
  for (let i = 0; i < Math.ceil(mb / 16); i++) {
    await write(tarHeader({ name: `site/_next/static/blob-${i}.bin`, size: fileBytes }));
    for (let off = 0; off < fileBytes; off += MB) await write(randomBytes(MB));
  }
  await write(Buffer.alloc(1024));
  gz.end();
  await once(out, 'close');
  spawnSync('mv', [path + '.tmp', path]);
}

/** Async on purpose: the emulator lives in this process, so a spawnSync would deadlock it. */
function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((res, rej) =>
    child.on('close', (code) => {
      if (code !== 0) rej(new Error(`${cmd} ${args.join(' ')} failed (${code}): ${stderr}`));
      else res({ ms: performance.now() - t0, stdout });
    }),
  );
}

/** `airlock emulate` as a child; its banner names the URL and the admin key file. */
async function startEmulate(): Promise<{ url: string; key: string; close(): void }> {
  const child = spawn(process.execPath, [BIN, 'emulate'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let banner = '';
  for await (const d of child.stdout) {
    banner += String(d);
    if (/assistant key file/.test(banner)) break;
  }
  const url = /listening on (\S+)/.exec(banner)?.[1];
  const keyFile = /admin key file:\s+(\S+)/.exec(banner)?.[1];
  if (!url || !keyFile) throw new Error(`unexpected airlock emulate banner: ${banner}`);
  return { url, key: (await readFile(keyFile, 'utf8')).trim(), close: () => void child.kill('SIGINT') };
}

async function benchSize(mb: number): Promise<void> {
  const archive = join(work, `bundle-${mb}mb.tar.gz`);
  await generate(mb, archive);
  const size = (await stat(archive)).size;
  // The emulator runs in its own process (`airlock emulate`), so this process is idle while
  // curl and airlock download: neither competes with the server for this process's event loop.
  const emu = await startEmulate();
  await fetch(`${emu.url}/_emulator/faults`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ serveArchive: [{ domain: 'docs.example.com', path: archive }], linkLifetimeSeconds: 3600 }),
  });
  const client = new ServiceClient({ baseUrl: emu.url, adminKey: emu.key });
  const env = { ...process.env, AIRLOCK_API_URL: emu.url, AIRLOCK_ADMIN_KEY: emu.key };
  const curlMs: number[] = [],
    dlMs: number[] = [],
    totalMs: number[] = [],
    rss: number[] = [];
  try {
    const job = await client.startExport('docs.example.com');
    await waitForJob(client, job.jobId, { intervalMs: 100, timeoutMs: 30_000 });
    await client.getBundle(job.jobId); // the emulator hashes the served file once, outside the timings
    for (let i = 0; i < runs; i++) {
      const out = join(work, `run-${mb}`);
      await rm(out, { recursive: true, force: true });
      await mkdir(out, { recursive: true });
      const link = await client.getBundle(job.jobId);
      curlMs.push((await timed('curl', ['-s', '-f', '-o', join(out, 'curl.bin'), link.bundleUrl])).ms);
      await rm(join(out, 'curl.bin'));
      const rssFile = join(out, 'rss.txt');
      const r = await timed(
        '/usr/bin/time',
        ['-f', '%M', '-o', rssFile, process.execPath, BIN, 'fetch', '--domain', 'docs.example.com', '--job', job.jobId, '--out', out, '--json'],
        env,
      );
      const summary = JSON.parse(r.stdout) as { seconds: { download: number; total: number }; archive: { size: number } };
      if (summary.archive.size !== size) throw new Error('size mismatch');
      dlMs.push(summary.seconds.download * 1000);
      if (process.env.BENCH_VERBOSE) console.error(`run ${i}: curl ${curlMs.at(-1)!.toFixed(0)} ms, airlock download ${dlMs.at(-1)!.toFixed(0)} ms`);
      totalMs.push(r.ms);
      rss.push(Number((await readFile(rssFile, 'utf8')).trim()) / 1024);
      await rm(out, { recursive: true, force: true });
    }
  } finally {
    emu.close();
  }
  const c = median(curlMs),
    d = median(dlMs),
    t = median(totalMs);
  const mbps = (ms: number) => (size / MB / (ms / 1000)).toFixed(0);
  console.log(
    `| ${(size / MB).toFixed(0)} MiB | ${(c / 1000).toFixed(2)} s (${mbps(c)} MiB/s) | ${(d / 1000).toFixed(2)} s (${mbps(d)} MiB/s) | ${(c / d).toFixed(2)}x | ${(t / 1000).toFixed(2)} s | ${Math.max(...rss).toFixed(0)} MB |`,
  );
}

await mkdir(work, { recursive: true });
console.log(`runs: ${runs}, medians; airlock = compiled CLI in a child process; RSS = max over runs`);
console.log('| archive | curl -o | airlock download | throughput vs curl | airlock whole fetch (incl. verify + package) | airlock peak RSS |');
console.log('|---|---|---|---|---|---|');
for (const s of values.sizes!.split(',')) await benchSize(Number(s));

// ---- the in-network mirror case (bench/fetch-mirror.ts; separate so either file can change alone) ----
{
  const { benchMirror } = await import('./fetch-mirror.js');
  console.log('');
  await benchMirror(Math.min(...values.sizes!.split(',').map(Number)), runs);
}
