/**
 * Hostile files where a store, a package or a volume should be, and hostile --out paths, through
 * the built binary: a FIFO, a device, a folder or a symlink loop is refused in words with a code,
 * promptly (never a hang that only SIGKILL ends), naming the path; a refusal changes nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { lstat, mkdir, readdir, readFile, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { importPackage } from '../../src/store/index.js';
import { splitPackage } from '../../src/package/volumes/index.js';
import { airlock, airlockAsync, type RunResult } from '../helpers/bin.js';
import { scratch } from '../helpers/scratch.js';
import { buildPackage, makeTempDir, sampleSite } from '../store/helpers.js';

let dir: string;
let pkg: string;
let pristine: string;

beforeAll(async () => {
  dir = await makeTempDir('airlock-store-files-hostile-');
  pkg = await buildPackage(dir, { version: 'v1', files: sampleSite('v1', 20) });
  pristine = join(dir, 'pristine');
  await importPackage(pkg, { store: pristine, trust: [], allowUnsigned: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const paths = scratch(() => dir);
const fresh = paths.fresh;
const copyStore = async (): Promise<string> => paths.copy(pristine);
const mkfifo = (path: string) => execFileSync('mkfifo', [path]);

/**
 * Digest of a tree that never opens anything but regular files (a FIFO in it would hang a
 * plain read): names, types, link targets and regular files' bytes; the audit log and its head,
 * which a refusal appends to, are left out (as storeDigest does).
 */
async function treeState(root: string): Promise<string> {
  const h = createHash('sha256');
  const visit = async (d: string): Promise<void> => {
    for (const name of (await readdir(d)).sort()) {
      const p = join(d, name);
      if (d === root && (name === 'audit.log' || name === 'audit.head')) continue;
      const st = await lstat(p);
      h.update(`${relative(root, p)}\0${st.mode}\0`);
      if (st.isDirectory()) await visit(p);
      else if (st.isSymbolicLink()) h.update(await readlink(p));
      else if (st.isFile()) h.update(await readFile(p));
    }
  };
  await visit(root);
  return h.digest('hex');
}

/** The process ended by itself (not killed by the test's timer) with `status`, and said why in words with a code. */
function refused(r: RunResult, status: number, code: string | RegExp, words: RegExp): void {
  expect(r.signal, `killed: ${r.stderr}`).toBeNull();
  expect(r.status, r.stderr).toBe(status);
  expect(r.stderr).toMatch(typeof code === 'string' ? new RegExp(`\\[${code}\\]\\n?$`) : code);
  expect(r.stderr).toMatch(words);
  expect(r.stderr).not.toMatch(/\b(EISDIR|ELOOP|ENOTDIR|EACCES|ENXIO|EAGAIN|AIRLOCK_INTERNAL)\b/);
}

const HANG_MS = 10_000;

describe('a FIFO where a store file, a package or a volume should be', () => {
  it('a FIFO as versions/v1/version.json: list, receipt and import end by themselves (exit 2, naming the file); nothing changes', async () => {
    const store = await copyStore();
    const meta = join(store, 'versions/v1/version.json');
    await rm(meta);
    mkfifo(meta);
    const before = await treeState(store);
    const outDir = fresh('r');
    await mkdir(outDir);
    const words = /version\.json is a FIFO \(named pipe\), not a regular file/;
    const [list, receipt, imp] = await Promise.all([
      airlockAsync(['list', '--store', store], { timeoutMs: HANG_MS }),
      airlockAsync(['receipt', '--store', store, '--out', join(outDir, 'receipt.json')], { timeoutMs: HANG_MS }),
      airlockAsync(['import', pkg, '--store', store, '--allow-unsigned'], { timeoutMs: HANG_MS }),
    ]);
    refused(list, 2, 'AIRLOCK_BAD_VERSION', words);
    refused(receipt, 2, 'AIRLOCK_BAD_VERSION', words);
    refused(imp, 2, 'AIRLOCK_BAD_VERSION', words);
    expect(list.stderr).toContain(meta);
    expect(await treeState(store)).toBe(before);
  });

  it('a FIFO as state.json: list ends by itself (exit 2, AIRLOCK_BAD_STATE)', async () => {
    const store = await copyStore();
    mkfifo(join(store, 'state.json'));
    refused(await airlockAsync(['list', '--store', store], { timeoutMs: HANG_MS }), 2, 'AIRLOCK_BAD_STATE', /state\.json is a FIFO/);
  });

  it('a FIFO as the store lock: activate and import end by themselves (exit 2, naming it); nothing changes', async () => {
    const store = await copyStore();
    mkfifo(join(store, 'lock'));
    const before = await treeState(store);
    const [act, imp] = await Promise.all([
      airlockAsync(['activate', 'v1', '--store', store], { timeoutMs: HANG_MS }),
      airlockAsync(['import', pkg, '--store', store, '--allow-unsigned', '--activate'], { timeoutMs: HANG_MS }),
    ]);
    for (const r of [act, imp]) refused(r, 2, 'AIRLOCK_STORE_PATH', /store lock .*lock is a FIFO \(named pipe\), not a regular file/);
    expect(await treeState(store)).toBe(before);
  });

  it("a FIFO as a version's variants/index.json: import --precompress ends by itself and rebuilds the variants", async () => {
    const store = await copyStore();
    await mkdir(join(store, 'versions/v1/variants'));
    mkfifo(join(store, 'versions/v1/variants/index.json'));
    const r = await airlockAsync(['import', pkg, '--store', store, '--allow-unsigned', '--precompress'], { timeoutMs: HANG_MS });
    expect(r.signal, r.stderr).toBeNull();
    expect(r.status, r.stderr).toBe(0);
    expect((await lstat(join(store, 'versions/v1/variants/index.json'))).isFile()).toBe(true);
  });

  it('a FIFO as the package: verify, inspect and import end by themselves (exit 2, naming it); no store is made', async () => {
    const fifo = join(fresh('pkg'), 'p.airlock');
    await mkdir(join(fifo, '..'));
    mkfifo(fifo);
    const store = fresh('nostore');
    const [verify, inspect, imp] = await Promise.all([
      airlockAsync(['verify', fifo, '--allow-unsigned'], { timeoutMs: HANG_MS }),
      airlockAsync(['inspect', fifo], { timeoutMs: HANG_MS }),
      airlockAsync(['import', fifo, '--store', store, '--allow-unsigned'], { timeoutMs: HANG_MS }),
    ]);
    for (const r of [verify, inspect, imp]) refused(r, 2, 'AIRLOCK_NOT_A_FILE', /p\.airlock is a FIFO \(named pipe\), not a regular file/);
    await expect(lstat(store)).rejects.toThrow();
  });

  it('a FIFO as the archive or package to preview, or to pack: each ends by itself (exit 2, naming it), never waits for a writer', async () => {
    const d = fresh('fifo-preview');
    await mkdir(d);
    for (const name of ['site.tar.gz', 'p.airlock']) mkfifo(join(d, name));
    const [tgz, pkgFifo, pack] = await Promise.all([
      airlockAsync(['preview', join(d, 'site.tar.gz'), '--port', '0'], { timeoutMs: HANG_MS }),
      airlockAsync(['preview', join(d, 'p.airlock'), '--port', '0'], { timeoutMs: HANG_MS }),
      airlockAsync(['pack', join(d, 'site.tar.gz'), '--domain', 'docs.example.com', '--out', join(d, 'out')], { timeoutMs: HANG_MS }),
    ]);
    for (const r of [tgz, pkgFifo, pack])
      refused(r, 2, /\[AIRLOCK_(NOT_A_FILE|USAGE)\]\n?$/, /(site\.tar\.gz|p\.airlock) (is a FIFO \(named pipe\)|is not a regular file)/);
  });

  it('a missing archive, a dangling link or a symlink loop to preview: exit 2 in words with a code, no errno', async () => {
    const d = fresh('missing-preview');
    await mkdir(d);
    await symlink(join(d, 'nowhere.tar.gz'), join(d, 'dangling.tar.gz'));
    await symlink(join(d, 'loop.tar.gz'), join(d, 'loop.tar.gz'));
    for (const [name, code] of [
      ['absent.tar.gz', 'AIRLOCK_NO_SUCH_FILE'],
      ['dangling.tar.gz', 'AIRLOCK_NO_SUCH_FILE'],
      ['loop.tar.gz', 'AIRLOCK_NOT_A_FILE'],
    ] as const) {
      refused(await airlockAsync(['preview', join(d, name), '--port', '0'], { timeoutMs: HANG_MS }), 2, code, new RegExp(`${name.replace('.', '\\.')} `));
    }
  });

  it('a FIFO as volume .002 beside a real .001: import and verify end by themselves (exit 4, that volume of the set is bad, named); the store is as it was', async () => {
    const media = fresh('media');
    await mkdir(media);
    const whole = join(media, 'v9.airlock');
    await buildPackage(media, { version: 'v9', files: sampleSite('v9', 20), name: 'v9.airlock' });
    const { volumes } = await splitPackage(whole, { split: 4096 });
    await rm(whole);
    expect(volumes.length).toBeGreaterThan(2);
    await rm(volumes[1]!);
    mkfifo(volumes[1]!);
    const store = await copyStore();
    const before = await treeState(store);
    const [imp, verify] = await Promise.all([
      airlockAsync(['import', volumes[0]!, '--store', store, '--allow-unsigned'], { timeoutMs: HANG_MS }),
      airlockAsync(['verify', volumes[0]!, '--allow-unsigned'], { timeoutMs: HANG_MS }),
    ]);
    for (const r of [imp, verify]) {
      refused(r, 4, 'AIRLOCK_VOLUME_NOT_A_FILE', /volume 2 of \d+ \(.*\) is a FIFO \(named pipe\), not a regular file/);
      expect(r.stderr).toContain(volumes[1]!);
    }
    expect(await treeState(store)).toBe(before);
  });
});

describe('a device, a folder or a symlink loop where a store file, a package or a volume should be', () => {
  it('/dev/zero symlinked as version.json: list ends (exit 2: a link is not followed), never reads forever', async () => {
    const store = await copyStore();
    const meta = join(store, 'versions/v1/version.json');
    await rm(meta);
    await symlink('/dev/zero', meta);
    refused(
      await airlockAsync(['list', '--store', store], { timeoutMs: HANG_MS }),
      2,
      'AIRLOCK_BAD_VERSION',
      /version\.json is a symbolic link \(to "\/dev\/zero"\), not a regular file: it is not followed/,
    );
  });

  it("a version's manifest or metadata linked to another version's file: activate and receipt refuse it (exit 2, not followed), and receipt never vouches for a version whose manifest it cannot read", async () => {
    for (const file of ['airlock.json', 'version.json']) {
      const store = await copyStore();
      const own = join(store, 'versions/v1', file);
      await rm(own);
      await symlink(join(pristine, 'versions/v1', file), own); // the same version's file in another store
      const before = await treeState(store);
      const outDir = fresh('r');
      await mkdir(outDir);
      const receipt = await airlockAsync(['receipt', '--store', store, '--out', join(outDir, 'receipt.json')], { timeoutMs: HANG_MS });
      refused(
        receipt,
        2,
        'AIRLOCK_BAD_VERSION',
        new RegExp(
          `v1/${file.replace('.', '\\.')} is a symbolic link \\(to ".*pristine/versions/v1/${file.replace('.', '\\.')}"\\), not a regular file: it is not followed`,
        ),
      );
      if (file === 'version.json')
        refused(await airlockAsync(['activate', 'v1', '--store', store], { timeoutMs: HANG_MS }), 2, 'AIRLOCK_BAD_VERSION', /it is not followed/);
      expect(await treeState(store)).toBe(before);
    }
  });

  it('a symlink loop as version.json: list says so in words (exit 2: a link is not followed), no ELOOP', async () => {
    const store = await copyStore();
    const meta = join(store, 'versions/v1/version.json');
    await rm(meta);
    await symlink(meta, meta);
    refused(
      airlock(['list', '--store', store], { timeoutMs: HANG_MS }),
      2,
      'AIRLOCK_BAD_VERSION',
      /version\.json is a symbolic link \(to ".*version\.json"\), not a regular file: it is not followed/,
    );
  });

  it('a FIFO as the stored airlock.json: list, receipt and activate end by themselves (exit 2, naming it); nothing changes', async () => {
    const store = await copyStore();
    const m = join(store, 'versions/v1/airlock.json');
    await rm(m);
    mkfifo(m);
    const before = await treeState(store);
    for (const args of [
      ['list', '--json'],
      ['receipt', '--out', join(fresh('r'), 'r.json')],
      ['activate', 'v1'],
    ]) {
      if (args[0] === 'receipt') await mkdir(join(args[2]!, '..'), { recursive: true });
      refused(await airlockAsync([...args, '--store', store], { timeoutMs: HANG_MS }), 2, 'AIRLOCK_BAD_VERSION', /v1\/airlock\.json is a FIFO/);
    }
    expect(await treeState(store)).toBe(before);
  });

  it('a stored airlock.json that is empty, garbage or not a manifest: receipt never vouches for it and activate never makes it active (exit 2, naming it); nothing changes', async () => {
    for (const content of ['', 'secret\n', '{"format":"airlock-package/1"}']) {
      const store = await copyStore();
      await writeFile(join(store, 'versions/v1/airlock.json'), content);
      const before = await treeState(store);
      const out = join(fresh('r'), 'r.json');
      await mkdir(join(out, '..'), { recursive: true });
      refused(
        await airlockAsync(['receipt', '--store', store, '--out', out], { timeoutMs: HANG_MS }),
        2,
        'AIRLOCK_BAD_VERSION',
        /manifest .*v1\/airlock\.json/,
      );
      refused(await airlockAsync(['activate', 'v1', '--store', store], { timeoutMs: HANG_MS }), 2, 'AIRLOCK_BAD_VERSION', /manifest .*v1\/airlock\.json/);
      expect(await treeState(store), JSON.stringify(content)).toBe(before);
    }
  });

  it('rollback to a version whose airlock.json is garbage or a FIFO: refused (exit 2, naming it), state.json unchanged', async () => {
    for (const kind of ['garbage', 'fifo']) {
      const store = await copyStore();
      await writeFile(join(store, 'state.json'), JSON.stringify({ active: 'v2', previous: 'v1', updatedAt: '2026-01-01T00:00:00.000Z' }));
      await mkdir(join(store, 'versions/v2'));
      await writeFile(
        join(store, 'versions/v2/version.json'),
        (await readFile(join(store, 'versions/v1/version.json'), 'utf8')).replace('"label": "v1"', '"label": "v2"').replace('"label":"v1"', '"label":"v2"'),
      );
      const m = join(store, 'versions/v1/airlock.json');
      await rm(m);
      if (kind === 'fifo') mkfifo(m);
      else await writeFile(m, 'secret\n');
      const before = await treeState(store);
      refused(await airlockAsync(['rollback', '--store', store], { timeoutMs: HANG_MS }), 2, 'AIRLOCK_BAD_VERSION', /v1\/airlock\.json/);
      expect(await treeState(store), kind).toBe(before);
    }
  });

  it('a dangling or self-looping link as version.json: activate names the link (exit 2, not followed), never "not in store"', async () => {
    for (const target of ['nope', 'version.json']) {
      const store = await copyStore();
      const meta = join(store, 'versions/v1/version.json');
      await rm(meta);
      await symlink(target, meta);
      refused(
        await airlockAsync(['activate', 'v1', '--store', store], { timeoutMs: HANG_MS }),
        2,
        'AIRLOCK_BAD_VERSION',
        /version\.json is a symbolic link .*not followed/,
      );
    }
  });

  it("a folder inside a version's site/ that is a link to another folder: serve refuses the version (exit 2, AIRLOCK_STORE_PATH naming it), never serves the other folder's files", async () => {
    const store = await copyStore();
    const outside = fresh('outside');
    await mkdir(outside, { recursive: true });
    await writeFile(join(outside, 'start.html'), '<h1>OUTSIDE SECRET</h1>');
    await rm(join(store, 'versions/v1/site/guide'), { recursive: true });
    await symlink(outside, join(store, 'versions/v1/site/guide'));
    expect(airlock(['activate', 'v1', '--store', store]).status).toBe(0);
    const r = await airlockAsync(['serve', '--store', store, '--port', '0'], { timeoutMs: HANG_MS });
    refused(r, 2, 'AIRLOCK_STORE_PATH', /versions\/v1\/site\/guide is a symbolic link \(to ".*outside[^"]*"\), which is not followed/);
    expect(r.stdout).not.toContain('http://');
  });

  it('/dev/zero symlinked as a volume: import ends (exit 4, naming it)', async () => {
    const media = fresh('media');
    await mkdir(media);
    const whole = join(media, 'v8.airlock');
    await buildPackage(media, { version: 'v8', files: sampleSite('v8', 20), name: 'v8.airlock' });
    const { volumes } = await splitPackage(whole, { split: 4096 });
    await rm(whole);
    await rm(volumes[1]!);
    await symlink('/dev/zero', volumes[1]!);
    const store = await copyStore();
    const before = await treeState(store);
    const r = await airlockAsync(['import', volumes[0]!, '--store', store, '--allow-unsigned'], { timeoutMs: HANG_MS });
    refused(r, 4, 'AIRLOCK_VOLUME_NOT_A_FILE', /is a character device, not a regular file/);
    expect(await treeState(store)).toBe(before);
  });

  it('a folder, a symlink loop or a path through a file as the package: verify says so in words with a code (exit 2)', async () => {
    const d = fresh('odd');
    await mkdir(join(d, 'folder.airlock'), { recursive: true });
    await symlink(join(d, 'loop.airlock'), join(d, 'loop.airlock'));
    await writeFile(join(d, 'file'), 'x');
    refused(airlock(['verify', join(d, 'folder.airlock'), '--allow-unsigned']), 2, 'AIRLOCK_NOT_A_FILE', /folder\.airlock is a folder, not a regular file/);
    refused(airlock(['verify', join(d, 'loop.airlock'), '--allow-unsigned']), 2, 'AIRLOCK_NOT_A_FILE', /loop\.airlock is a loop of symbolic links/);
    refused(
      airlock(['verify', join(d, 'file/p.airlock'), '--allow-unsigned']),
      2,
      'AIRLOCK_NOT_A_FILE',
      /p\.airlock is not reachable: a part of its path is not a folder/,
    );
    refused(airlock(['inspect', join(d, 'loop.airlock')]), 2, 'AIRLOCK_NOT_A_FILE', /loop\.airlock is a loop of symbolic links/);
  });
});

describe("the store's own folders replaced by something else", () => {
  it('STORE/staging a file, or a symlink to a folder elsewhere: import refuses in words (exit 2, AIRLOCK_STORE_PATH naming it) before any change; nothing behind the link is removed', async () => {
    const d = fresh('staging');
    await mkdir(d);
    const v2 = await buildPackage(d, { version: 'v2', files: sampleSite('v2', 20) });
    const elsewhere = join(d, 'elsewhere');
    await mkdir(elsewhere);
    await writeFile(join(elsewhere, 'precious'), 'keep me');
    for (const [plant, words] of [
      [(p: string) => writeFile(p, 'x'), /staging is a regular file, not a folder/],
      [(p: string) => symlink(elsewhere, p), /staging is a symbolic link \(to "[^"]+"\), which is not followed, not a folder/],
    ] as const) {
      const store = await copyStore();
      const staging = join(store, 'staging');
      await plant(staging);
      const before = await treeState(store);
      const log = await readFile(join(store, 'audit.log'));
      const r = await airlockAsync(['import', v2, '--store', store, '--allow-unsigned', '--activate'], { timeoutMs: 30_000 });
      refused(r, 2, 'AIRLOCK_STORE_PATH', words);
      expect(r.stderr).toContain(staging);
      expect(await treeState(store)).toBe(before);
      expect(await readFile(join(store, 'audit.log'))).toEqual(log);
      expect(await readFile(join(elsewhere, 'precious'), 'utf8')).toBe('keep me');
    }
  });
});

describe('a folder inside the store that is a symbolic link', () => {
  it('versions, staging, trust, trust/chain, leases or downloads a symlink into another store: import and list refuse it (exit 2, AIRLOCK_STORE_PATH naming it), never follow it; both stores are unchanged', async () => {
    const d = fresh('folder-links');
    await mkdir(d);
    const v2 = await buildPackage(d, { version: 'v2', files: sampleSite('v2', 20) });
    for (const sub of ['versions', 'staging', 'trust', 'trust/chain', 'leases', 'downloads']) {
      const other = await copyStore();
      await mkdir(join(other, sub), { recursive: true });
      await writeFile(join(other, sub, 'precious'), 'keep me');
      const store = await copyStore();
      await rm(join(store, sub), { recursive: true, force: true });
      await mkdir(join(store, sub, '..'), { recursive: true });
      await symlink(join(other, sub), join(store, sub));
      const [before, otherBefore] = [await treeState(store), await treeState(other)];
      const log = await readFile(join(store, 'audit.log'));
      const imp = await airlockAsync(['import', v2, '--store', store, '--allow-unsigned', '--activate'], { timeoutMs: 30_000 });
      refused(
        imp,
        2,
        'AIRLOCK_STORE_PATH',
        new RegExp(`${join(store, sub).replace(/[/.]/g, '\\$&')} is a symbolic link \\(to "[^"]+"\\), which is not followed, not a folder`),
      );
      const list = airlock(['list', '--store', store], { timeoutMs: 15_000 });
      refused(list, 2, 'AIRLOCK_STORE_PATH', /is a symbolic link/);
      expect(await treeState(store), sub).toBe(before);
      expect(await readFile(join(store, 'audit.log'))).toEqual(log);
      expect(await treeState(other), sub).toBe(otherBefore);
    }
  });
});

describe('a store JSON file naming a key twice', () => {
  it('state.json with "active" twice (JSON.parse would keep the last): list and activate exit 2 AIRLOCK_BAD_STATE naming the key; nothing changes', async () => {
    const store = await copyStore();
    await writeFile(join(store, 'state.json'), '{"active":"v1","active":"v9","previous":null,"updatedAt":null}\n');
    const before = await treeState(store);
    for (const args of [['list'], ['activate', 'v1']]) {
      const r = await airlockAsync([...args, '--store', store], { timeoutMs: HANG_MS });
      refused(r, 2, 'AIRLOCK_BAD_STATE', /state\.json names the key "active" twice/);
    }
    expect(await treeState(store)).toBe(before);
  });
});

describe('receipt --out: only a new regular file outside the store', () => {
  it('a device node as --out is refused (exit 2), the device stays a device', async () => {
    const store = await copyStore();
    const d = fresh('dev');
    await mkdir(d);
    const dev = join(d, 'null');
    try {
      execFileSync('mknod', [dev, 'c', '1', '3']);
    } catch {
      await symlink('/dev/null', dev); // not root: a symlink to a device
    }
    const r = airlock(['receipt', '--store', store, '--out', dev, '--force']);
    refused(r, 2, 'AIRLOCK_OUT_PATH', /is a (character device|symbolic link), not a regular file/);
    expect(r.stderr).toContain(dev);
    const st = await lstat(dev);
    expect(st.isCharacterDevice() || st.isSymbolicLink()).toBe(true);
  });

  it('--out inside the store (its version.json) is refused even with --force; the store is unchanged and list still works', async () => {
    const store = await copyStore();
    const before = await treeState(store);
    for (const out of [join(store, 'versions/v1/version.json'), join(store, 'receipt.json')]) {
      const r = airlock(['receipt', '--store', store, '--out', out, '--force']);
      refused(r, 2, 'AIRLOCK_OUT_PATH', /inside the store/);
      expect(r.stderr).toContain(out);
    }
    expect(await treeState(store)).toBe(before);
    expect(airlock(['list', '--store', store]).status).toBe(0);
  });

  it('every command that writes an output names no place inside a store, even without --store: delta, pack, trust draft/sign, keygen', async () => {
    const store = await copyStore();
    const before = await treeState(store);
    const d = fresh('outs');
    await mkdir(d);
    execFileSync('ln', ['-s', join(store, 'versions'), join(d, 'via-link')]);
    const v2 = await buildPackage(d, { version: 'v2', files: sampleSite('v2', 3) });
    const runs: [string[], string][] = [
      [['delta', pkg, v2, '--out', join(store, 'versions')], join(store, 'versions')],
      [['delta', pkg, v2, '--out', join(d, 'via-link')], join(d, 'via-link')],
      [['delta', pkg, v2, '--out', join(store, 'versions/new')], join(store, 'versions/new')],
      [['pack', pkg, '--domain', 'docs.example.com', '--out', join(store, 'staging')], join(store, 'staging')],
      [['trust', 'draft', '--key', `a=${pkg}`, '--threshold', '1', '--serial', '2', '--out', join(store, 'policy.json')], join(store, 'policy.json')],
      [['trust', 'sign', pkg, '--key', pkg, '--out', join(store, 'versions/v1/policy.sig')], join(store, 'versions/v1/policy.sig')],
      [['keygen', '--out', join(store, 'signer')], join(store, 'signer')],
    ];
    for (const [args, out] of runs) {
      const r = airlock(args, { timeoutMs: HANG_MS });
      refused(r, 2, 'AIRLOCK_OUT_PATH', /is inside the store .*; --out must name a (file|folder) outside it/);
      expect(r.stderr, args.join(' ')).toContain(out);
    }
    expect(await treeState(store)).toBe(before);
    expect(airlock(['list', '--store', store]).status).toBe(0);
  });

  it('a folder or a FIFO as --out is refused in words (exit 2), not EISDIR, and promptly', async () => {
    const store = await copyStore();
    const d = fresh('outs');
    await mkdir(join(d, 'folder'), { recursive: true });
    mkfifo(join(d, 'fifo'));
    refused(
      airlock(['receipt', '--store', store, '--out', join(d, 'folder')], { timeoutMs: HANG_MS }),
      2,
      'AIRLOCK_OUT_PATH',
      /folder is a folder, not a regular file/,
    );
    refused(
      await airlockAsync(['receipt', '--store', store, '--out', join(d, 'fifo'), '--force'], { timeoutMs: HANG_MS }),
      2,
      'AIRLOCK_OUT_PATH',
      /fifo is a FIFO \(named pipe\), not a regular file/,
    );
    refused(airlock(['receipt', '--store', store, '--out', join(d, 'missing/receipt.json')]), 2, 'AIRLOCK_OUT_PATH', /does not exist/);
  });

  it('an existing regular file is replaced only with --force; a new one is written', async () => {
    const store = await copyStore();
    const d = fresh('outs');
    await mkdir(d);
    const out = join(d, 'receipt.json');
    expect(airlock(['receipt', '--store', store, '--out', out]).status).toBe(0);
    const first = await readFile(out, 'utf8');
    expect(JSON.parse(first).format).toBe('airlock-receipt/1');
    await writeFile(out, 'keep me');
    refused(airlock(['receipt', '--store', store, '--out', out]), 2, 'AIRLOCK_EXISTS', /already exists; pass --force to replace it/);
    expect(await readFile(out, 'utf8')).toBe('keep me');
    expect(airlock(['receipt', '--store', store, '--out', out, '--force']).status).toBe(0);
    expect(JSON.parse(await readFile(out, 'utf8')).format).toBe('airlock-receipt/1');
  });
});

describe('delta --out: a folder, never a device, a FIFO or a file', () => {
  it('a device, a FIFO or a file as delta --out DIR is refused in words (exit 2), not a raw EEXIST', async () => {
    const d = fresh('delta');
    await mkdir(d);
    const v2 = await buildPackage(d, { version: 'v2', files: sampleSite('v2', 20) });
    mkfifo(join(d, 'fifo'));
    await writeFile(join(d, 'file'), 'x');
    for (const [out, kind] of [
      ['/dev/null', 'a character device'],
      [join(d, 'fifo'), 'a FIFO \\(named pipe\\)'],
      [join(d, 'file'), 'a regular file'],
    ] as const) {
      const r = await airlockAsync(['delta', pkg, v2, '--out', out], { timeoutMs: HANG_MS });
      refused(r, 2, 'AIRLOCK_OUT_PATH', new RegExp(`${out.replace(/[/.]/g, '\\$&')} is (${kind}), not a folder`));
      expect(r.stderr).not.toContain('EEXIST');
    }
  });
});

describe('a manifest naming an unsafe path is refused naming that path', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['a ../ path', '../escape.txt', /files\.0\.path "\.\.\/escape\.txt": must be a safe relative path/],
    ['an absolute path', '/etc/passwd', /"\/etc\/passwd": must be a safe relative path/],
    ['a backslash', 'a\\b.html', /"a\\\\b\.html": must be a safe relative path/],
    ['a drive letter', 'C:/x.html', /"C:\/x\.html": must be a safe relative path/],
    ['an escape sequence', 'a\u001b[31m.html', /"a\\u001b\[31m\.html": must be a safe relative path/],
  ];
  for (const [what, path, words] of cases) {
    it(`${what}: verify and import exit 4 naming it (escaped); the store is unchanged`, async () => {
      const d = fresh('bad');
      await mkdir(d);
      const bad = await buildPackage(d, {
        version: 'v5',
        files: sampleSite('v5'),
        tamper: (m) => {
          m.files[0]!.path = path;
        },
      });
      const store = await copyStore();
      const before = await treeState(store);
      for (const r of [airlock(['verify', bad, '--allow-unsigned']), airlock(['import', bad, '--store', store, '--allow-unsigned'])]) {
        expect(r.status, r.stderr).toBe(4);
        expect(r.stderr).toMatch(/\[AIRLOCK_BAD_MANIFEST\]\n?$/);
        expect(r.stderr).toMatch(words);
        expect(r.stderr).not.toContain('\u001b');
      }
      expect(await treeState(store)).toBe(before);
    });
  }

  it('a vendored record naming a bad URL: the message names the URL, not only its index', async () => {
    const d = fresh('bad');
    await mkdir(d);
    const bad = await buildPackage(d, {
      version: 'v6',
      files: sampleSite('v6'),
      tamper: (m) => {
        (m as unknown as Record<string, unknown>).vendor = [
          { path: `vendor/${'a'.repeat(64)}.css`, size: 1, sha256: 'a'.repeat(64), kind: 'styles', urls: ['http://cdn.example.com/x.css'] },
        ];
      },
    });
    const r = airlock(['verify', bad, '--allow-unsigned']);
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toMatch(/vendor\.0\.urls\.0 "http:\/\/cdn\.example\.com\/x\.css": must be an https URL/);
  });
});
