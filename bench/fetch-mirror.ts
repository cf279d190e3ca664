/**
 * Mirror case of `npm run bench:fetch` (the in-network mirror): `airlock fetch --api-url <mirror>` (the compiled
 * CLI; against a mirror it takes the package form: download + sha256 as bytes land, then digest
 * and safety checks of the package, then a rename) against `curl -s -o FILE` of the same package
 * link, same run, medians. Target: airlock's download phase >= 0.9x curl's throughput.
 *   node --import tsx bench/fetch-mirror.ts [--mb 100] [--runs 3]
 * Needs `npm run build` first. Work files go to bench/out/fetch-mirror (gitignored bench/out).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { hashToken } from '../src/mirror/index.js';
import { importPackage } from '../src/store/index.js';
import { ServiceClient } from '../src/upstream/index.js';
import { makePackage } from '../test/helpers/make-package.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'dist/src/cli/bin.js');
const MB = 1024 * 1024;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<{ ms: number; stdout: string }> {
  const t0 = performance.now();
  const child = spawn(cmd, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '',
    stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d));
  child.stderr.on('data', (d: Buffer) => (stderr += d));
  return new Promise((res, rej) =>
    child.on('close', (code) => (code === 0 ? res({ ms: performance.now() - t0, stdout }) : rej(new Error(`${cmd} failed (${code}): ${stderr}`)))),
  );
}

export async function benchMirror(mb: number, runs: number): Promise<void> {
  const work = join(ROOT, 'bench/out/fetch-mirror');
  await rm(work, { recursive: true, force: true });
  const site = join(work, 'site');
  await mkdir(join(site, 'assets'), { recursive: true });
  await writeFile(join(site, 'index.html'), '<!doctype html><title>bench</title>');
  for (let i = 0; i * 16 < mb; i++) await writeFile(join(site, 'assets', `blob${i}.bin`), randomBytes(Math.min(16, mb - i * 16) * MB));
  const { pkgPath } = await makePackage({ siteDir: site, outDir: join(work, 'pkg'), version: 'bench' });
  const store = join(work, 'store');
  await importPackage(pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
  await rm(site, { recursive: true, force: true });
  const token = 'svc_bench_' + randomBytes(12).toString('hex');
  await writeFile(join(work, 'tokens'), hashToken(token) + '\n');
  const child = spawn(process.execPath, [BIN, 'serve', '--store', store, '--mirror', '--mirror-tokens', join(work, 'tokens'), '--port', '0'], {
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  let banner = '';
  for await (const d of child.stdout) {
    banner += String(d);
    if (banner.includes('\n')) break;
  }
  const url = banner.trim().replace(/\/$/, '');
  const size = (await stat(pkgPath)).size;
  const client = new ServiceClient({ baseUrl: url, adminKey: token });
  const curl: number[] = [],
    dl: number[] = [],
    plain: number[] = [];
  // A plain node download (undici stream → file, no hashing): separates the server's speed from the client engine's.
  const plainJs =
    "const {request}=require('undici');const {createWriteStream}=require('fs');const {pipeline}=require('stream/promises');" +
    '(async()=>{const r=await request(process.argv[1]);await pipeline(r.body,createWriteStream(process.argv[2]));})()';
  try {
    for (let i = 0; i < runs; i++) {
      const out = join(work, `run${i}`);
      await mkdir(out, { recursive: true });
      const link = (await client.getBundle('mv_bench')) as { packageUrl?: string };
      curl.push((await timed('curl', ['-s', '-f', '-o', join(out, 'curl.bin'), link.packageUrl!])).ms);
      await rm(join(out, 'curl.bin'));
      plain.push(
        (await timed(process.execPath, ['-e', plainJs, link.packageUrl!, join(out, 'plain.bin')], { ...process.env, NODE_PATH: join(ROOT, 'node_modules') }))
          .ms,
      );
      await rm(join(out, 'plain.bin'));
      const r = await timed(process.execPath, [BIN, 'fetch', '--domain', 'docs.example.com', '--api-url', url, '--out', out, '--json'], {
        ...process.env,
        AIRLOCK_ADMIN_KEY: token,
      });
      const s = JSON.parse(r.stdout) as { form?: string; seconds: { download: number } };
      if (s.form !== 'package') throw new Error('airlock fetch did not take the package form');
      dl.push(s.seconds.download * 1000);
      await rm(out, { recursive: true, force: true });
    }
  } finally {
    child.kill('SIGTERM');
  }
  const c = median(curl),
    d = median(dl),
    p = median(plain);
  const mbps = (ms: number) => (size / MB / (ms / 1000)).toFixed(0);
  console.log('| mirror package | curl -o | node undici → file (incl. node start) | airlock fetch download phase | throughput vs curl |');
  console.log('|---|---|---|---|---|');
  console.log(
    `| ${(size / MB).toFixed(0)} MiB | ${(c / 1000).toFixed(2)} s (${mbps(c)} MiB/s) | ${(p / 1000).toFixed(2)} s (${mbps(p)} MiB/s) | ${(d / 1000).toFixed(2)} s (${mbps(d)} MiB/s) | ${(c / d).toFixed(2)}x |`,
  );
  await rm(work, { recursive: true, force: true });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const { values } = parseArgs({ options: { mb: { type: 'string', default: '100' }, runs: { type: 'string', default: '3' } } });
  await benchMirror(Number(values.mb), Number(values.runs));
}
