import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createRng, type Rng } from '../../fixtures/prng.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { makePackage } from '../helpers/make-package.js';
import { privateTmp, sleep, startAirlock, type Proc } from '../helpers/proc.js';
import { cleanup, labelledSite, setActive, tempRoot, writeVersion } from '../serve/helpers.js';
import { SITE_DIR } from '../fetch/emu.js';
import { verifyAudit } from '../../src/store/audit.js';

/**
 * Signal storms: a second SIGTERM 10 ms after the first (what GNU `timeout` sends) killed preview
 * before its clean-up and left the whole extracted site in the temp folder (14 of 53 runs). Now
 * every long-running command traps SIGINT/SIGTERM/SIGHUP for its whole life: storms of signals,
 * any number, any spacing, at any moment, and nothing is ever left behind.
 */
type Sig = 'SIGINT' | 'SIGTERM' | 'SIGHUP';
const GNU_TIMEOUT: Array<[Sig, number]> = [
  ['SIGTERM', 0],
  ['SIGTERM', 10],
];

/** A storm: GNU timeout's pair, or 2-6 random signals 0-25 ms apart (SIGHUP only where it stops). */
function storm(rng: Rng, i: number, hangupStops: boolean): Array<[Sig, number]> {
  if (i % 3 === 0) return GNU_TIMEOUT;
  const kinds: Sig[] = hangupStops ? ['SIGINT', 'SIGTERM', 'SIGHUP'] : ['SIGINT', 'SIGTERM'];
  const out: Array<[Sig, number]> = [];
  for (let n = rng.int(2, 6); n > 0; n--) out.push([rng.pick(kinds), rng.int(0, 25)]);
  return out;
}

async function send(p: Proc, signals: Array<[Sig, number]>): Promise<void> {
  for (const [sig, gap] of signals) {
    if (gap) await sleep(gap);
    p.kill(sig);
  }
}

let root: string;
let store: string;
let pkg: string;
let assetsPkg: string;
let emu: RunningEmulator;

beforeAll(async () => {
  root = await tempRoot('airlock-signals-');
  store = join(root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await setActive(store, 'v1');
  // A site big enough that extraction and import take a while: signals land mid-work.
  const site = join(root, 'site');
  await mkdir(join(site, 'pages'), { recursive: true });
  await writeFile(join(site, 'index.html'), '<!doctype html><title>home</title>' + '<p>docs</p>\n'.repeat(500));
  for (let i = 0; i < 600; i++) await writeFile(join(site, 'pages', `p${i}.html`), `<!doctype html><h1>${i}</h1>` + `<p>text ${i}</p>\n`.repeat(300));
  pkg = (await makePackage({ siteDir: site, outDir: join(root, 'pkg'), version: 'v1' })).pkgPath;
  // Many files but one page: extraction takes a while, loading (the HTML transform) does not.
  const assets = join(root, 'assets');
  await mkdir(join(assets, 'data'), { recursive: true });
  await writeFile(join(assets, 'index.html'), '<!doctype html><title>home</title>');
  for (let i = 0; i < 300; i++) await writeFile(join(assets, 'data', `d${i}.txt`), `line ${i}\n`.repeat(200));
  assetsPkg = (await makePackage({ siteDir: assets, outDir: join(root, 'pkg'), version: 'v2' })).pkgPath;
  emu = await startEmulator({ timings: { queuedMs: 30, runningMs: 150 }, sites: { 'docs.example.com': { dir: SITE_DIR, format: 'tar.gz' } } });
});
afterAll(async () => {
  await emu?.close();
  await cleanup(root);
});

/**
 * Start `args` `runs` times; each time wait for `ready` (or a random 0..maxDelayMs), send a storm,
 * and check the exit and that the private TMPDIR (and whatever `check` looks at) is empty.
 */
async function stormLoop(o: {
  args: () => string[];
  runs: number;
  seed: number;
  hangupStops: boolean;
  minDelayMs?: number;
  maxDelayMs: number;
  ready?: RegExp;
  readyOn?: 'stdout' | 'stderr';
  env?: NodeJS.ProcessEnv;
  okCodes: number[];
  check?: (p: Proc) => Promise<void>;
}): Promise<Record<string, number>> {
  const rng = createRng(o.seed);
  const outcomes: Record<string, number> = {};
  for (let i = 0; i < o.runs; i++) {
    const tmp = await privateTmp();
    try {
      const p = startAirlock(o.args(), { env: { TMPDIR: tmp.dir, ...o.env }, cwd: root });
      const waitReady = o.ready !== undefined && i % 2 === 0;
      if (waitReady) await p.waitFor(o.ready!, undefined, o.readyOn);
      else await sleep(rng.int(o.minDelayMs ?? 0, o.maxDelayMs));
      const signals = storm(rng, i, o.hangupStops);
      await send(p, signals);
      const { code, signal } = await p.exit(30_000);
      const what = `run ${i} (${waitReady ? 'after ready' : 'random moment'}), storm ${JSON.stringify(signals)}; stderr:\n${p.stderr()}`;
      expect(signal === 'SIGKILL', `hung (killed after 30 s): ${what}`).toBe(false);
      // Once ready, the trap is certainly set: the exit must be the command's own. Before that,
      // a signal may still find the process before it created anything (Node's default action).
      if (waitReady || signal === null) expect(o.okCodes, what).toContain(code);
      expect(await tmp.litter(), what).toEqual([]);
      await o.check?.(p);
      const outcome = signal ?? `exit ${code}`;
      outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
    } finally {
      await tmp.remove();
    }
  }
  return outcomes;
}

const noLeases = async () => expect(await readdir(join(store, 'leases')).catch(() => [])).toEqual([]);

describe('repeated signals never cut a clean-up short (through the binary)', () => {
  it('preview: storms at any moment (extraction, loading, serving) leave no extracted site behind', async () => {
    await stormLoop({
      args: () => ['preview', assetsPkg, '--port', '0'],
      runs: 10,
      seed: 1,
      hangupStops: true,
      maxDelayMs: 900,
      ready: /^http:\/\//m,
      okCodes: [0],
    });
  }, 120_000);

  it('serve: storms leave no lease; SIGHUP alone only re-reads the active version', async () => {
    await stormLoop({
      args: () => ['serve', '--store', store, '--port', '0'],
      runs: 10,
      seed: 2,
      hangupStops: false,
      maxDelayMs: 700,
      ready: /^http:\/\//m,
      okCodes: [0],
      check: noLeases,
    });
    const p = startAirlock(['serve', '--store', store, '--port', '0']);
    await p.waitFor(/^http:\/\//m);
    for (let i = 0; i < 5; i++) p.kill('SIGHUP');
    await sleep(300);
    expect(p.child.exitCode).toBeNull(); // still serving
    await send(p, GNU_TIMEOUT);
    expect((await p.exit()).code).toBe(0);
    await noLeases();
  }, 120_000);

  it('serve --workers 2: storms stop every worker cleanly, no lease left', async () => {
    await stormLoop({
      args: () => ['serve', '--store', store, '--port', '0', '--workers', '2'],
      runs: 4,
      seed: 3,
      hangupStops: false,
      maxDelayMs: 1500,
      ready: /^http:\/\//m,
      okCodes: [0],
      check: noLeases,
    });
  }, 120_000);

  it('emulate: storms remove its key folder and archive cache', async () => {
    await stormLoop({ args: () => ['emulate', '--port', '0'], runs: 8, seed: 4, hangupStops: true, maxDelayMs: 600, ready: /listening on http/, okCodes: [0] });
  }, 120_000);

  it('demo: storms during the chain or while serving remove the folder holding the private key', async () => {
    await stormLoop({ args: () => ['demo', '--port', '0'], runs: 4, seed: 5, hangupStops: true, maxDelayMs: 3000, ready: /^http:\/\//m, okCodes: [0] });
  }, 120_000);

  it('import: storms leave the store either without the version or with all of it, never staging, a lock or a lease', async () => {
    const s = join(root, 'import-store');
    const outcomes = await stormLoop({
      // Every other run storms once extraction has begun (mid-import however slow the machine is);
      // the others at random moments, some before the trap is set.
      args: () => ['import', pkg, '--store', s, '--allow-unsigned', '--activate'],
      runs: 10,
      seed: 6,
      hangupStops: true,
      maxDelayMs: 1500,
      okCodes: [0, 1],
      ready: /^extracting/m,
      readyOn: 'stderr',
      check: async (p) => {
        // Trust policy: the audit log (and trust/seen.json) may be there, and its chain holds whatever the signal hit.
        const entries = (await readdir(s).catch(() => [] as string[])).filter(
          (e) => !['versions', 'state.json', 'leases', 'audit.log', 'audit.head', 'trust'].includes(e),
        );
        expect(entries, p.stderr()).toEqual([]);
        expect((await verifyAudit(s)).ok, p.stderr()).toBe(true);
        expect(await readdir(join(s, 'leases')).catch(() => [])).toEqual([]);
        const versions = await readdir(join(s, 'versions')).catch(() => [] as string[]);
        if (p.child.exitCode === 1) expect(p.stderr()).toContain('[AIRLOCK_INTERRUPTED]');
        if (versions.length) expect((await readdir(join(s, 'versions', 'v1', 'site'), { recursive: true })).length).toBeGreaterThan(600);
        await rm(s, { recursive: true, force: true });
      },
    });
    expect(outcomes['exit 1'] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0); // the storms did land mid-import
  }, 120_000);

  it('fetch: storms keep at most the resumable part, never a half-written package', async () => {
    const out = join(root, 'fetch-out');
    const outcomes = await stormLoop({
      // Every other run storms once the export job is started (the emulator then takes 180 ms
      // before the download): mid-fetch however slow the machine is; the others at random moments.
      args: () => ['fetch', '--domain', 'docs.example.com', '--out', out],
      runs: 6,
      seed: 7,
      hangupStops: true,
      minDelayMs: 400,
      maxDelayMs: 1400,
      okCodes: [0, 1],
      ready: /^export job \S+ started$/m,
      readyOn: 'stderr',
      env: { AIRLOCK_API_URL: emu.url, AIRLOCK_ADMIN_KEY: emu.keys.admin },
      check: async (p) => {
        const files = await readdir(out).catch(() => [] as string[]);
        const bad = files.filter((f) => !/^docs\.example\.com-.*\.airlock$/.test(f) && !/^\.docs\.example\.com\.bundle\.part(\.json)?$/.test(f));
        expect(bad, p.stderr()).toEqual([]);
        if (p.child.exitCode === 1) expect(p.stderr()).toContain('[AIRLOCK_INTERRUPTED]');
        await rm(out, { recursive: true, force: true });
      },
    });
    expect(outcomes['exit 1'] ?? 0, JSON.stringify(outcomes)).toBeGreaterThan(0); // the storms did land mid-fetch
  }, 120_000);
});
