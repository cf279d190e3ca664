/**
 * Writers of the connected side (sign, pack, delta) stopped by a signal part-way, and flags and files they
 * are given that are not what they expect, through the built binary: a stop leaves no hidden temp
 * file on the medium and says AIRLOCK_INTERRUPTED; a FIFO, a folder or a device given as --full is
 * named for what it is, never "missing"; a --split too large is refused as too large.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { watch } from 'node:fs';
import { cp, mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlockAsync } from '../helpers/bin.js';
import { startAirlock, type Proc } from '../helpers/proc.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, type TestKey } from '../store/helpers.js';

let dir: string;
let key: TestKey;
let big: string;
let small: { v1: string; v2: string };

/** The private key's PEM file (mode 0600, as keygen writes it) beside its public one. */
async function keyFile(k: TestKey): Promise<string> {
  const path = k.pubPath.replace(/\.pub$/, '.key');
  await writeFile(path, k.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return path;
}

beforeAll(async () => {
  dir = await makeTempDir('airlock-interrupted-writers-');
  key = await makeKey(dir);
  // Incompressible bytes, so that signing (a copy of the whole package) runs long enough to be stopped part-way;
  // last in path order, so that a delta spends its last seconds on this one file (no check between files then).
  big = await buildPackage(dir, { version: 'v9', files: { ...sampleSite('v9'), 'zzz-last.bin': randomBytes(48 << 20) }, key, name: 'big.airlock' });
  small = {
    v1: await buildPackage(dir, { version: 'v1', files: sampleSite('v1'), key, name: 'v1.airlock' }),
    v2: await buildPackage(dir, { version: 'v2', files: sampleSite('v2', 5), key, name: 'v2.airlock' }),
  };
}, 120_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Send `sig` to `p` as soon as a name matching `re` appears in `folder` (a watch, not a poll); resolves with that name. */
function stopWhenCreated(p: Proc, folder: string, re: RegExp, sig: NodeJS.Signals): Promise<string> {
  return new Promise((resolve, reject) => {
    const w = watch(folder, (_event, name) => {
      if (name && re.test(name)) {
        w.close();
        p.kill(sig);
        resolve(name);
      }
    });
    void p.exit().then(() => {
      w.close();
      reject(new Error(`exited before ${re} appeared in ${folder}: ${p.stderr()}`));
    });
  });
}

/** `sign --json` of a copy of the big package on a medium of its own (a folder), by a second key. */
async function startSigning(name: string): Promise<{ media: string; pkg: string; before: string; p: Proc }> {
  const media = join(dir, name);
  await mkdir(media);
  const pkg = join(media, 'big.airlock');
  await cp(big, pkg);
  const before = execFileSync('sha256sum', [pkg], { encoding: 'utf8' }).split(' ')[0]!;
  const second = await keyFile(await makeKey(media, 'second'));
  return { media, pkg, before, p: startAirlock(['sign', pkg, '--key', second, '--json']) };
}

/** An export archive of 48 MiB of incompressible bytes (packing it lasts long enough to be stopped part-way), made once. */
let archiveMade: Promise<string> | undefined;
function bigArchive(): Promise<string> {
  return (archiveMade ??= (async () => {
    const site = join(dir, 'pack-site');
    await mkdir(site);
    await writeFile(join(site, 'index.html'), '<title>t</title>');
    await writeFile(join(site, 'big.bin'), randomBytes(48 << 20));
    const archive = join(dir, 'pack-site.tar');
    execFileSync('tar', ['-cf', archive, '-C', site, '.']);
    return archive;
  })());
}

/** SIGTERM to `p` once `out` (a folder the command makes in `parent`) holds a name matching `re` (watches, not polls). */
function stopInNewFolder(p: Proc, parent: string, out: string, re: RegExp): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const w = watch(parent, () => {
      w.close();
      const inner = watch(out, (_event, name) => {
        if (!name || !re.test(name)) return;
        inner.close();
        p.kill('SIGTERM');
        resolve();
      });
    });
    void p.exit().then(() => {
      w.close();
      reject(new Error(`ended first: ${p.stderr()}`));
    });
  });
}

describe('a writer stopped part-way', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    'sign stopped by %s while it writes: exit 1 AIRLOCK_INTERRUPTED, the package unchanged, no hidden temp file left beside it',
    async (sig) => {
      const { media, pkg, before, p } = await startSigning(`media-sign-${sig}`);
      const tmp = await stopWhenCreated(p, media, /\.tmp$/, sig);
      const { code } = await p.exit(30_000);
      expect(tmp).toMatch(/^\.big\.airlock\.\d+\.[0-9a-f]+\.tmp$/);
      expect(code, p.stderr()).toBe(1);
      expect(p.stderr()).toContain(`interrupted by ${sig}; ${pkg} is as it was [AIRLOCK_INTERRUPTED]`);
      expect(JSON.parse(p.stdout())).toMatchObject({ ok: false, code: 'AIRLOCK_INTERRUPTED', exitCode: 1 });
      expect((await readdir(media)).sort()).toEqual(['big.airlock', 'second.key', 'second.pub']);
      expect(execFileSync('sha256sum', [pkg], { encoding: 'utf8' }).split(' ')[0]).toBe(before);
    },
  );

  it('sign stopped the moment the signed package takes its name: it says what is true (exit 0 and signed, or exit 1 and unchanged), never interrupted when signed', async () => {
    const { media, pkg, before, p } = await startSigning('media-sign-rename');
    await new Promise<void>((resolve, reject) => {
      // The temp file is renamed onto big.airlock: the first event naming big.airlock once the temp file exists.
      let writing = false;
      const w = watch(media, (_event, name) => {
        if (name?.endsWith('.tmp')) writing = true;
        else if (writing && name === 'big.airlock') {
          w.close();
          p.kill('SIGTERM');
          resolve();
        }
      });
      void p.exit().then(() => {
        w.close();
        reject(new Error(`sign ended first: ${p.stderr()}`));
      });
    });
    const { code } = await p.exit(30_000);
    const signed = execFileSync('sha256sum', [pkg], { encoding: 'utf8' }).split(' ')[0] !== before;
    const doc = JSON.parse(p.stdout()) as { ok: boolean; added?: boolean; code?: string };
    if (signed) {
      expect(code, p.stderr()).toBe(0);
      expect(doc).toMatchObject({ ok: true, added: true });
      expect(p.stderr()).not.toContain('AIRLOCK_INTERRUPTED');
    } else {
      expect(code, p.stderr()).toBe(1);
      expect(doc).toMatchObject({ ok: false, code: 'AIRLOCK_INTERRUPTED' });
    }
    expect((await readdir(media)).sort()).toEqual(['big.airlock', 'second.key', 'second.pub']);
  });

  it('pack stopped by SIGTERM while it writes the package: exit 1, one JSON document saying no package was written, and the --out folder it made is gone', async () => {
    const archive = await bigArchive();
    const parent = join(dir, 'pack-parent');
    await mkdir(parent);
    const out = join(parent, 'made-by-pack');
    const p = startAirlock([
      'pack',
      archive,
      '--domain',
      'docs.example.com',
      '--version-label',
      'v1',
      '--sign-key',
      await keyFile(key),
      '--out',
      out,
      '--json',
    ]);
    // The package's temp file appears inside the new --out folder: stop the command as it writes.
    await stopInNewFolder(p, parent, out, /\.tmp$/);
    const { code } = await p.exit(30_000);
    expect(code, p.stderr()).toBe(1);
    expect(p.stderr()).toMatch(/interrupted by SIGTERM; no package was written \[AIRLOCK_INTERRUPTED\]/);
    expect(JSON.parse(p.stdout())).toMatchObject({ ok: false, code: 'AIRLOCK_INTERRUPTED', exitCode: 1 });
    expect(await readdir(parent)).toEqual([]);
  });

  it('pack --split stopped while it splits: exit 1, no package and no volume left (the volumes are the one change asked for)', async () => {
    const archive = await bigArchive();
    const parent = join(dir, 'split-parent');
    await mkdir(parent);
    const out = join(parent, 'made-by-pack');
    const p = startAirlock(['pack', archive, '--domain', 'docs.example.com', '--version-label', 'v1', '--out', out, '--split', '8M', '--json']);
    // The first volume's temp file appears once the package is written and the split began.
    await stopInNewFolder(p, parent, out, /\.airlock\.001\.\d+\.[0-9a-f]+\.tmp$/);
    const { code } = await p.exit(30_000);
    expect(code, p.stderr()).toBe(1);
    expect(p.stderr()).toMatch(/interrupted by SIGTERM; no package and no volume were written \[AIRLOCK_INTERRUPTED\]/);
    expect(JSON.parse(p.stdout())).toMatchObject({ ok: false, code: 'AIRLOCK_INTERRUPTED' });
    expect(await readdir(parent)).toEqual([]);
  });

  it('delta stopped by SIGTERM while it works: exit 1 AIRLOCK_INTERRUPTED in words and in --json, and the --out folder it made is gone', async () => {
    const parent = join(dir, 'delta-parent');
    await mkdir(parent);
    const out = join(parent, 'made-by-delta');
    const p = startAirlock(['delta', small.v1, big, '--out', out, '--json']);
    // The work folder appears inside the new --out folder: stop the command once it is at work.
    await stopInNewFolder(p, parent, out, /./);
    const { code } = await p.exit(30_000);
    expect(code, p.stderr()).toBe(1);
    expect(p.stderr()).toMatch(/interrupted by SIGTERM; no delta and no full package were written \[AIRLOCK_INTERRUPTED\]/);
    expect(JSON.parse(p.stdout())).toMatchObject({ ok: false, code: 'AIRLOCK_INTERRUPTED', exitCode: 1 });
    expect(await readdir(parent)).toEqual([]);
  });
});

it('delta stopped late (the full package already written, the payload being compressed): exit 1 AIRLOCK_INTERRUPTED, neither package kept', async () => {
  const out = join(dir, 'delta-late');
  await mkdir(out);
  const p = startAirlock(['delta', small.v1, big, '--out', out, '--json']);
  const name = await stopWhenCreated(p, out, /\.full\.airlock$/, 'SIGTERM');
  const { code } = await p.exit(30_000);
  expect(name).toMatch(/-v9\.full\.airlock$/);
  expect(code, p.stderr()).toBe(1);
  expect(p.stderr()).toMatch(/interrupted by SIGTERM; no delta and no full package were written \[AIRLOCK_INTERRUPTED\]/);
  expect(JSON.parse(p.stdout())).toMatchObject({ ok: false, code: 'AIRLOCK_INTERRUPTED' });
  expect(await readdir(out)).toEqual([]);
});

describe('inputs that are not what the flag expects', () => {
  it.each([
    ['a FIFO', (p: string) => execFileSync('mkfifo', [p]), /is a FIFO/],
    ['a folder', (p: string) => execFileSync('mkdir', [p]), /is a folder/],
  ])('sign DELTA --full given %s: named for what it is (exit 2 or 4, a code), never "missing"', async (_what, make, words) => {
    const out = join(dir, `delta-full-${_what.replace(/\W/g, '')}`);
    const signer = await keyFile(key);
    const d = await airlockAsync(['delta', small.v1, small.v2, '--out', out, '--sign-key', signer]);
    expect(d.status, d.stderr).toBe(0);
    const odd = join(out, 'odd');
    make(odd);
    const delta = (await readdir(out)).find((f) => f.endsWith('.delta.airlock'))!;
    const r = await airlockAsync(['sign', join(out, delta), '--key', signer, '--full', odd]);
    expect(r.stderr).not.toMatch(/missing/);
    expect(r.stderr).toMatch(words);
    expect(r.stderr).toContain(odd);
    expect(r.stderr).toMatch(/\[AIRLOCK_[A-Z_]+\]/);
    expect([2, 4]).toContain(r.status);
  });

  it.each(['9007199254740992', '99999999999G', '18446744073709551617K'])('--split %s is refused as too large, not as too small', async (size) => {
    const r = await airlockAsync(['delta', small.v1, small.v2, '--out', join(dir, `split-${size}`), '--split', size]);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/a volume can be at most \d+ bytes \[AIRLOCK_USAGE\]/);
    expect(r.stderr).not.toMatch(/at least/);
  });
});
