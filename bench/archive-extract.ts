/**
 * Benchmark of src/archive extractArchive against GNU `tar -xzf` and `unzip -q` on the same
 * archive and disk (extraction speed): a ~100 MB, 3,000-file HTML-like site as tar.gz and zip,
 * 3 runs each, medians, ratio, and airlock's peak RSS (measured in a child process).
 *   node --import tsx bench/archive-extract.ts [--mb 100] [--files 3000] [--runs 3]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import yazl from 'yazl';
import { extractArchive } from '../src/archive/index.js';

const self = fileURLToPath(import.meta.url);
const arg = (name: string, dflt: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
};

if (process.argv[2] === '--child') {
  // Child: one extraction, timed in-process; report wall ms and peak RSS.
  const baseMB = process.resourceUsage().maxRSS / 1024; // node + tsx loader, before any work
  const t0 = performance.now();
  const r = await extractArchive({ path: process.argv[3]! }, process.argv[4]!);
  const ms = performance.now() - t0;
  process.stdout.write(JSON.stringify({ ms, baseMB, maxRssMB: process.resourceUsage().maxRSS / 1024, files: r.files.length }));
  process.exit(0);
}

const WORDS =
  'the docs guide api reference install configure deploy server client token request response error page section example code function return value option default build static export search assistant analytics'.split(
    ' ',
  );

/** Deterministic pseudo-random HTML page: compresses roughly like real docs (~4-6x). */
function page(seed: number, bytes: number): string {
  let x = (seed * 2654435761) >>> 0;
  const rnd = () => (x = (x * 1103515245 + 12345) >>> 0) >>> 8;
  const parts = [`<!doctype html><html><head><title>Page ${seed}</title></head><body><main>`];
  let n = parts[0]!.length;
  while (n < bytes) {
    const s = `<p id="p${rnd() % 100000}">${Array.from({ length: 12 }, () => WORDS[rnd() % WORDS.length]).join(' ')} ${rnd().toString(36)}</p>\n`;
    parts.push(s);
    n += s.length;
  }
  return parts.join('') + '</main></body></html>';
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function timeCmd(cmd: string, args: string[]): number {
  const t0 = performance.now();
  execFileSync(cmd, args, { stdio: 'ignore' });
  return performance.now() - t0;
}

const mb = arg('mb', 100);
const files = arg('files', 3000);
const runs = arg('runs', 3);
const root = mkdtempSync(join(tmpdir(), 'airlock-bench-'));
try {
  const src = join(root, 'src', 'site');
  const per = Math.floor((mb * 1024 * 1024) / files);
  for (let i = 0; i < files; i++) {
    const p = join(src, `section${i % 30}`, `page${i}.html`);
    mkdirSync(dirname(p), { recursive: true });
    writeFileSync(p, page(i, i === 0 ? 100 : per));
  }
  writeFileSync(join(src, 'index.html'), page(-1, 1000));
  const tgz = join(root, 'site.tar.gz');
  execFileSync('tar', ['-czf', tgz, '-C', join(root, 'src'), 'site']);
  const zipPath = join(root, 'site.zip');
  const z = new yazl.ZipFile();
  const list = execFileSync('find', ['site', '-type', 'f'], { cwd: join(root, 'src') })
    .toString()
    .trim()
    .split('\n');
  for (const f of list) z.addFile(join(root, 'src', f), f);
  z.end();
  await once(z.outputStream.pipe(createWriteStream(zipPath)), 'finish');
  const sizes = execFileSync('du', ['-sh', tgz, zipPath, src]).toString().trim().replace(/\n/g, '; ');
  console.log(`site: ${list.length} files; ${sizes}`);

  let k = 0;
  const fresh = () => {
    const d = join(root, `out${k++}`);
    mkdirSync(d);
    return d;
  };
  const clean = () => {
    for (let i = 0; i < k; i++) rmSync(join(root, `out${i}`), { recursive: true, force: true });
    execFileSync('sync');
  };
  const airlock = (archive: string) => {
    const out = spawnSync(process.execPath, ['--import', 'tsx', self, '--child', archive, join(root, `out${k++}`)], { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(out.stderr);
    return JSON.parse(out.stdout) as { ms: number; baseMB: number; maxRssMB: number };
  };

  for (const [label, archive, tool, toolArgs] of [
    ['tar.gz', tgz, 'tar', (d: string) => ['-xzf', tgz, '-C', d]],
    ['zip', zipPath, 'unzip', (d: string) => ['-q', zipPath, '-d', d]],
  ] as const) {
    const gnu: number[] = [];
    const ours: number[] = [];
    let rss = 0;
    let base = 0;
    for (let i = 0; i < runs; i++) {
      clean();
      gnu.push(timeCmd(tool, toolArgs(fresh())));
      clean();
      const r = airlock(archive);
      ours.push(r.ms);
      rss = Math.max(rss, r.maxRssMB);
      base = Math.max(base, r.baseMB);
    }
    clean();
    const g = median(gnu);
    const a = median(ours);
    console.log(
      `${label.padEnd(6)} ${tool} ${g.toFixed(0)} ms | airlock extract+sha256+fsync ${a.toFixed(0)} ms | ratio ${(a / g).toFixed(2)}x | airlock peak RSS ${rss.toFixed(0)} MB (of which node+tsx before work ${base.toFixed(0)} MB)` +
        `   (runs: ${tool} ${gnu.map((x) => x.toFixed(0)).join('/')}, airlock ${ours.map((x) => x.toFixed(0)).join('/')})`,
    );
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
