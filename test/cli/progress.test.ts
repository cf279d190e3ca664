import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { Writable } from 'node:stream';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Progress } from '../../src/cli/progress.js';
import { fetchReporter, importReporter } from '../../src/cli/reporters.js';
import { amount, fmtBytes } from '../../src/util/units.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { makePackage } from '../helpers/make-package.js';
import { airlockAsync } from '../helpers/bin.js';
import { cleanup, tempRoot } from '../serve/helpers.js';
import { SITE_DIR } from '../fetch/emu.js';

/**
 * Progress: import printed one line per precompressed file (2,188 lines for one real
 * site), units differed between commands, small packages showed `0/0 MB`, and a bar could have a
 * log line glued to it. One reporter now (src/cli/progress.ts) for every command.
 */
class Sink extends Writable {
  text = '';
  constructor(
    public isTTY = false,
    public columns = 100,
  ) {
    super();
  }
  override _write(chunk: Buffer, _enc: string, cb: () => void) {
    this.text += chunk.toString();
    cb();
  }
}

describe('units', () => {
  it('binary units everywhere, never a small size rounded to 0', () => {
    expect(fmtBytes(0)).toBe('0 B');
    expect(fmtBytes(1023)).toBe('1023 B');
    expect(fmtBytes(1024)).toBe('1.0 KiB');
    expect(fmtBytes(17_796)).toBe('17.4 KiB');
    expect(fmtBytes(3 * 1024 ** 2)).toBe('3.0 MiB');
    expect(fmtBytes(5.5 * 1024 ** 3)).toBe('5.5 GiB');
    expect(amount(17_796, 17_796, 'bytes')).toBe('17.4 KiB of 17.4 KiB (100%)');
    expect(amount(0, 0, 'bytes')).toBe('0 B of 0 B');
    expect(amount(120, 2188, 'files')).toBe('120 of 2188 files (5%)');
    expect(amount(5, undefined, 'bytes')).toBe('5 B');
  });
});

describe('Progress without a TTY', () => {
  it('2,188 files: a line per 10 % crossed (12 in all), no escape codes', () => {
    const s = new Sink();
    const p = new Progress(s, { interactive: false, now: () => 0 });
    for (let i = 1; i <= 2188; i++) p.update('precompressing', i, 2188, 'files');
    p.end();
    const lines = s.text.trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(12);
    expect(lines.at(-1)).toBe('precompressing 2188 of 2188 files (100%)');
    expect(s.text).not.toContain('\x1b');
  });

  it('a slow step: a line every 5 s at most while the percentage stands still', () => {
    const s = new Sink();
    let now = 0;
    const p = new Progress(s, { interactive: false, now: () => now });
    for (let i = 0; i < 600; i++) {
      now += 100;
      p.update('download', 1000 + i, 10 ** 9, 'bytes');
    } // 60 s, < 1 %
    expect(s.text.trim().split('\n').length).toBeLessThanOrEqual(13);
  });

  it('fetch events: bounded lines, KiB/MiB, status changes shown', () => {
    const s = new Sink();
    let now = 0;
    const report = fetchReporter(new Progress(s, { interactive: false, now: () => now }), () => now);
    report({ type: 'job', jobId: 'se_1', reused: false });
    for (const status of ['queued', 'running', 'completed'] as const)
      report({ type: 'status', job: { jobId: 'se_1', status, progress: status === 'completed' ? 100 : 40, pageCount: 17 } as never });
    for (let b = 0; b <= 1000; b++) {
      now += 10;
      report({ type: 'download', progress: { bytes: b * 3000, total: 3_000_000, resumedFrom: 0 } });
    }
    report({ type: 'verify', path: 'x' });
    const lines = s.text.trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(18);
    expect(s.text).toContain('export running 40%, 17 pages');
    expect(s.text).toContain('download 2.9 MiB of 2.9 MiB (100%)');
    expect(s.text).not.toMatch(/\bMB\b/);
  });
});

describe('Progress on a TTY (a fake TTY stream)', () => {
  it('draws a bar, and a log line always starts on a line of its own', () => {
    const s = new Sink(true);
    const p = new Progress(s, { interactive: true });
    const report = importReporter(p);
    report({ phase: 'variants', done: 10, total: 100 });
    // eslint-disable-next-line no-control-regex -- the bar is drawn with escape codes on a TTY, which is the point
    expect(s.text).toMatch(/^\x1b7.*precompressing \[\u2591+\]/); // a bar, drawn with cursor control
    report({ phase: 'committed', version: 'v1' });
    // The bar was stopped (its last state drawn, then a newline) before the log line.
    const at = s.text.indexOf('version v1 committed');
    expect(s.text.slice(0, at)).toMatch(/precompressing \[\u2588{3}\u2591{27}\] 10 of 100 files \(10%\)[^\n]*\n$/);
    report({ phase: 'variants', done: 100, total: 100 });
    p.log('done');
    expect(s.text).toMatch(/100 of 100 files \(100%\)[^\n]*\ndone\n$/);
    p.end();
  });
});

describe('through the binary (stderr is a pipe: plain lines)', () => {
  let root: string;
  let emu: RunningEmulator;
  beforeAll(async () => {
    root = await tempRoot('airlock-progress-');
    emu = await startEmulator({ timings: { queuedMs: 30, runningMs: 150 }, sites: { 'docs.example.com': { dir: SITE_DIR, format: 'tar.gz' } } });
  });
  afterAll(async () => {
    await emu.close();
    await cleanup(root);
  });

  it('import of 1,200 text files: a dozen precompressing lines, binary units, no 0/0 MB', async () => {
    const site = join(root, 'site');
    await mkdir(join(site, 'p'), { recursive: true });
    await writeFile(join(site, 'index.html'), '<!doctype html><title>x</title>');
    for (let i = 0; i < 1200; i++) await writeFile(join(site, 'p', `${i}.txt`), `text ${i}\n`.repeat(150));
    const { pkgPath } = await makePackage({ siteDir: site, outDir: join(root, 'pkg') });
    const t0 = Date.now();
    const r = await airlockAsync(['import', pkgPath, '--store', join(root, 'store'), '--allow-unsigned', '--precompress'], { timeoutMs: 120_000 });
    // Besides one line per 10 %, a line per 5 s is allowed: a slow machine may print that many more.
    const slow = Math.floor((Date.now() - t0) / 5000);
    expect(r.status, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines.filter((l) => l.startsWith('precompressing')).length).toBeGreaterThanOrEqual(2);
    expect(lines.filter((l) => l.startsWith('precompressing')).length).toBeLessThanOrEqual(12 + slow);
    expect(lines.length).toBeLessThanOrEqual(22 + slow);
    expect(r.stderr).toMatch(/copying the package \d+\.\d (KiB|MiB) of \d+\.\d (KiB|MiB) \(100%\)/);
    expect(r.stderr).toMatch(/verified 1201 files, \d+\.\d (KiB|MiB)/);
    expect(r.stderr).not.toMatch(/\bMB\b|0\/0/);
    expect(r.stderr).not.toContain('\x1b');
  }, 120_000);

  it('fetch of a small site: KiB, bounded lines, no escape codes', async () => {
    const r = await airlockAsync(['fetch', '--domain', 'docs.example.com', '--out', join(root, 'out')], {
      env: { AIRLOCK_API_URL: emu.url, AIRLOCK_ADMIN_KEY: emu.keys.admin },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/download \d+\.\d KiB of \d+\.\d KiB \(100%\)/);
    expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(20);
    expect(r.stderr).not.toContain('\x1b');
  });
});
