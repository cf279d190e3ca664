/**
 * An import stopped by a signal, or that lost its lock, exits promptly, drains its
 * writes, removes its staging folder and releases the lock: the store is byte-identical to before
 * (or, after the commit, holds the whole version and no lease of the dead import).
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { airlock, startAirlock, type Proc } from '../helpers/bin.js';
import { until as untilHolds } from '../helpers/wait.js';
import { startMarker } from '../../src/store/proc.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from '../store/helpers.js';

const HOLDER = fileURLToPath(new URL('../store/fixtures/hold-lock.ts', import.meta.url));

let dir: string;
let key: TestKey;
let v1: string;
let big: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-interrupt-');
  key = await makeKey(dir);
  v1 = await buildPackage(dir, { version: 'v1', files: sampleSite('one'), key });
  // Thousands of files, one fsync each: extraction lasts long enough to be interrupted.
  const files: Record<string, string> = { 'index.html': '<h1>big</h1>' + 'Welcome. '.repeat(200) };
  for (let i = 0; i < 3000; i++) files[`pages/p${i}.html`] = `<p>${i}</p>` + 'text '.repeat(60 + (i % 50));
  big = await buildPackage(dir, { version: 'big', files, key });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});
const children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

interface Running {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  done: Promise<{ status: number | null; signal: NodeJS.Signals | null; stdout: string }>;
}
/** The binary with ARGS, or with `script` (a .ts file run by tsx) instead of it. */
function start(args: string[], script?: string): Running {
  const p = script === undefined ? startAirlock(args, { stdio: 'pipe' }) : holderProc(script, args);
  children.push(p.child);
  const done = p.closed().then(({ code, signal }) => ({ status: code, signal, stdout: p.stdout() }));
  return { child: p.child, stdout: p.stdout, stderr: p.stderr, done };
}
function holderProc(script: string, args: string[]): Pick<Proc, 'child' | 'stdout' | 'stderr' | 'closed'> {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], { env: { ...process.env, AIRLOCK_STORE: undefined } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const closed = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return { child, stdout: () => stdout, stderr: () => stderr, closed: () => closed };
}
/** Poll (bounded) until `test` holds. */
const until = (what: string, test: () => Promise<boolean> | boolean, ms = 20_000) => untilHolds(test, { timeoutMs: ms, intervalMs: 10, what });
const filesUnder = async (p: string) => (await readdir(p, { recursive: true }).catch(() => [])).length;

let n = 0;
async function storeWithV1(): Promise<{ store: string; before: string }> {
  const store = join(dir, `store-${++n}`);
  expect(airlock(['import', v1, '--store', store, '--trust', key.pubPath, '--activate', '--no-precompress']).status).toBe(0);
  return { store, before: await treeDigest(store) };
}

describe('airlock import interrupted', () => {
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    it(`${sig} during extraction: exit 1 promptly (AIRLOCK_INTERRUPTED naming ${sig}), staging removed, lock released, store byte-identical`, async () => {
      const { store, before } = await storeWithV1();
      const run = start(['import', big, '--store', store, '--trust', key.pubPath, '--no-precompress']);
      await until('files in staging', async () => (await filesUnder(join(store, 'staging'))) > 50);
      const sent = Date.now();
      run.child.kill(sig);
      const r = await run.done;
      expect(Date.now() - sent).toBeLessThan(5_000);
      expect(r.status).toBe(1);
      expect(run.stderr()).toContain(`interrupted by ${sig}; nothing was added to store ${store}; it is as it was [AIRLOCK_INTERRUPTED]`);
      expect(await treeDigest(store)).toBe(before); // no staging, no lock, no version
    });
  }

  it('SIGINT while waiting for the store lock: exits at once, nothing written, the holder keeps its lock', async () => {
    const { store } = await storeWithV1();
    const holder = start([store], HOLDER);
    // "locked" is printed once acquireLock has returned, i.e. after the holder removed its own
    // temporary lock file (the lock file naming it appears a moment before: digesting the store
    // then counted that temporary file, which made this test fail once in CI).
    await until('the lock', () => holder.stdout().includes('locked'));
    expect(await readFile(join(store, 'lock'), 'utf8')).toContain(String(holder.child.pid));
    const lockBefore = await readFile(join(store, 'lock'), 'utf8');
    const before = await treeDigest(store);
    const run = start(['import', big, '--store', store, '--trust', key.pubPath, '--no-precompress']);
    await until('the wait message', () => run.stderr().includes('waiting for the store lock'));
    const sent = Date.now();
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(Date.now() - sent).toBeLessThan(3_000);
    expect(r.status).toBe(1);
    expect(run.stderr()).toContain('[AIRLOCK_INTERRUPTED]');
    expect(await readFile(join(store, 'lock'), 'utf8')).toBe(lockBefore);
    expect(await treeDigest(store)).toBe(before);
  });

  it('SIGTERM after the commit, while precompressing: the version stays whole, exit 1, no lease and no temp file left', async () => {
    const store = join(dir, `store-${++n}`);
    const run = start(['import', big, '--store', store, '--trust', key.pubPath, '--activate', '--precompress']);
    await until('the commit', () => run.stderr().includes('precompressing') || run.stderr().includes('committed'));
    run.child.kill('SIGTERM');
    const r = await run.done;
    expect(r.status).toBe(1);
    expect(run.stderr()).toMatch(/interrupted by SIGTERM; version big was committed to store .*but not activated.*\[AIRLOCK_INTERRUPTED\]/);
    expect(await readdir(join(store, 'leases')).catch(() => [])).toEqual([]);
    const list = JSON.parse(airlock(['list', '--store', store, '--json']).stdout);
    // Activation comes after the precompression: the interrupted import left the version in, inactive.
    expect(list).toMatchObject({ active: null, versions: [{ version: 'big', fileCount: 3001 }] });
    const tmp = (await readdir(store, { recursive: true })).filter((f) => f.endsWith('.tmp'));
    expect(tmp).toEqual([]); // the stopped workers' half-written variants are gone
    // No staging, no lock, no state (never activated); the leases folder may stay (empty).
    // Trust policy: the import was logged at its commit (audit.log/.head, trust/seen.json); never activated: no state.json.
    expect((await readdir(store)).filter((e) => e !== 'leases').sort()).toEqual(['audit.head', 'audit.log', 'trust', 'versions']);
    expect(JSON.parse(airlock(['audit', 'verify', '--store', store, '--json']).stdout)).toMatchObject({ ok: true, lines: 1 });
  });

  it('SIGTERM while the HTML is being prepared: answered at once (queued pages dropped), the version whole and inactive, exit 1', async () => {
    const store = join(dir, `store-${++n}`);
    const run = start(['import', big, '--store', store, '--trust', key.pubPath, '--activate', '--prepare-html', '--no-precompress']);
    await until('the HTML step', () => run.stderr().includes('transforming HTML'));
    const sent = Date.now();
    run.child.kill('SIGTERM');
    const r = await run.done;
    // The step used to run to its end (3,000 pages: seconds) before the signal was honoured.
    expect(Date.now() - sent).toBeLessThan(2_000);
    expect(r.status).toBe(1);
    expect(run.stderr()).toMatch(/interrupted by SIGTERM; version big was committed to store .*but not activated.*\[AIRLOCK_INTERRUPTED\]/);
    expect(await readdir(join(store, 'leases')).catch(() => [])).toEqual([]);
    expect(JSON.parse(airlock(['list', '--store', store, '--json']).stdout)).toMatchObject({ active: null, versions: [{ version: 'big', fileCount: 3001 }] });
    expect((await readdir(store, { recursive: true })).filter((f) => f.endsWith('.tmp'))).toEqual([]);
  });
});

describe('airlock import that loses its lock', () => {
  it("another process took the lock meanwhile: exit 1 AIRLOCK_LOCK_LOST naming the lock, staging removed, the new holder's lock untouched", async () => {
    const { store, before } = await storeWithV1();
    const run = start(['import', big, '--store', store, '--trust', key.pubPath, '--no-precompress']);
    const lock = join(store, 'lock');
    await until('the import to hold the lock', async () => (await readFile(lock, 'utf8').catch(() => '')).includes(`"pid":${run.child.pid}`));
    // As if the import had been judged dead and its lock taken over by this (live) process.
    const thief = JSON.stringify({ pid: process.pid, start: startMarker(process.pid), nonce: 'taken-over', since: new Date().toISOString() });
    await writeFile(`${lock}.thief`, thief);
    await rename(`${lock}.thief`, lock);
    const r = await run.done;
    expect(r.status).toBe(1);
    expect(run.stderr()).toContain(`lost the store lock ${lock} to process ${process.pid} [AIRLOCK_LOCK_LOST]`);
    expect(await readFile(lock, 'utf8')).toBe(thief);
    await rm(lock);
    expect(await treeDigest(store)).toBe(before);
  });
});
