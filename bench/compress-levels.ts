/**
 * `npm run bench:compress-levels`: which brotli quality / gzip level to precompress with (real-export performance:
 * a fast level keeping >= 90 % of the best level's ratio). Corpora: the pages of a generated
 * real-export-shaped site, and real JS/CSS/JSON text (this project's node_modules: minified and
 * unminified library code, as documentation sites ship). Ratio = original bytes / compressed
 * bytes; "of best" = ratio / ratio at brotli 11 (gzip 9); speed in MB/s on one core. Peer: the
 * best level in the same run.
 *   node --import tsx bench/compress-levels.ts [--max-mb 20]
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants as C, gzipSync } from 'node:zlib';
import { generateSite } from '../fixtures/generate.js';
import { REAL_EXPORT } from './real-site.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { 'max-mb': { type: 'string', default: '20' } } });
const maxBytes = Number(values['max-mb']) * 1048576;

function collect(dir: string, re: RegExp): Buffer[] {
  const out: Buffer[] = [];
  let total = 0;
  for (const p of readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort()) {
    if (!re.test(p)) continue;
    const full = join(dir, p);
    const s = statSync(full);
    if (!s.isFile() || s.size < 1024 || s.size > 4 << 20) continue;
    out.push(readFileSync(full));
    if ((total += s.size) > maxBytes) break;
  }
  return out;
}

function measure(name: string, files: Buffer[]): void {
  const total = files.reduce((n, b) => n + b.length, 0);
  const rows: Array<{ level: string; ratio: number; mbps: number; family: 'br' | 'gz' }> = [];
  const run = (level: string, family: 'br' | 'gz', f: (b: Buffer) => Buffer) => {
    const t0 = performance.now();
    let out = 0;
    for (const b of files) out += f(b).length;
    rows.push({ level, family, ratio: total / out, mbps: total / 1048576 / ((performance.now() - t0) / 1000) });
  };
  for (const q of [4, 5, 6, 9, 11]) {
    run(`brotli ${q}`, 'br', (b) =>
      brotliCompressSync(b, { params: { [C.BROTLI_PARAM_QUALITY]: q, [C.BROTLI_PARAM_SIZE_HINT]: b.length, [C.BROTLI_PARAM_MODE]: C.BROTLI_MODE_TEXT } }),
    );
  }
  for (const l of [1, 4, 6, 9]) run(`gzip ${l}`, 'gz', (b) => gzipSync(b, { level: l }));
  const best = { br: rows.find((r) => r.level === 'brotli 11')!.ratio, gz: rows.find((r) => r.level === 'gzip 9')!.ratio };
  process.stdout.write(`\n${name}: ${files.length} files, ${(total / 1048576).toFixed(1)} MB\n| level | ratio | of best | MB/s |\n|---|---:|---:|---:|\n`);
  for (const r of rows)
    process.stdout.write(`| ${r.level} | ${r.ratio.toFixed(2)} | ${((100 * r.ratio) / best[r.family]).toFixed(0)} % | ${r.mbps.toFixed(1)} |\n`);
}

const dir = await mkdtemp(join(tmpdir(), 'airlock-levels-'));
try {
  await generateSite(dir, { ...REAL_EXPORT, pages: 300, traits: { ...REAL_EXPORT.traits, redirectStubs: 300, largePages: undefined } });
  measure('HTML pages (real-export-shaped, generated)', collect(dir, /\.html$/));
  measure('JS/CSS/JSON (node_modules)', collect(join(ROOT, 'node_modules'), /\.(js|mjs|css|json)$/));
} finally {
  await rm(dir, { recursive: true, force: true });
}
