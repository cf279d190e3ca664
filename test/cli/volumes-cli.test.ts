import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, chown, copyFile, mkdir, open, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { airlock, airlockAsync, asNobody } from '../helpers/bin.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from '../store/helpers.js';
import { rig, type Rig } from '../fetch/emu.js';

let dir: string;
let key: TestKey;
const keyPath = () => join(dir, 'signer.key');
let n = 0;

beforeAll(async () => {
  dir = await makeTempDir('airlock-volumes-cli-');
  await chmod(dir, 0o755); // user nobody reads the read-only media below
  key = await makeKey(dir);
  await writeFile(keyPath(), key.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
});
afterAll(async () => {
  await chmodTree(dir, 0o755).catch(() => {});
  await rm(dir, { recursive: true, force: true });
});

async function chmodTree(p: string, mode: number): Promise<void> {
  for (const e of await readdir(p, { withFileTypes: true })) if (e.isDirectory()) await chmodTree(join(p, e.name), mode);
  await chmod(p, mode);
}

/** A site as an export archive (tar.gz), packed and split by the CLI; returns the volumes. */
async function packSplit(tag: string, split = '6KiB', extra = 30): Promise<{ out: string; vols: string[] }> {
  const work = join(dir, `w-${n++}`);
  await mkdir(work);
  const pkg = await buildPackage(work, { version: 'tmp', files: sampleSite(tag, extra) }); // only its bundle is used
  const { readPackage } = await import('../../src/package/index.js');
  const layout = await readPackage(pkg);
  const fh = await open(pkg, 'r');
  const archive = Buffer.alloc(layout.archive.size);
  await fh.read(archive, 0, archive.length, layout.archive.offset);
  await fh.close();
  await writeFile(join(work, 'export.tar.gz'), archive);
  const out = join(work, 'out');
  const r = airlock([
    'pack',
    join(work, 'export.tar.gz'),
    '--domain',
    'docs.example.com',
    '--version-label',
    tag,
    '--sign-key',
    keyPath(),
    '--out',
    out,
    '--split',
    split,
    '--json',
  ]);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  const vols = (JSON.parse(r.stdout) as { volumes: { volumes: string[] } }).volumes.volumes;
  expect(await readdir(out)).toEqual(vols.map((v) => basename(v))); // the single .airlock is gone
  return { out, vols };
}

/** Names, sizes and mtimes of everything in the folders: proves nothing was written there. */
async function snapshot(folders: string[]): Promise<string> {
  const rows: string[] = [];
  for (const f of folders)
    for (const e of (await readdir(f)).sort()) {
      const s = await stat(join(f, e));
      rows.push(`${f}/${e} ${s.size} ${s.mtimeMs} ${s.ctimeMs}`);
    }
  return rows.join('\n');
}

describe('airlock pack --split, verify and import of volumes (CLI)', () => {
  it('volumes spread over two read-only media folders verify and import in place: nothing written, joined or deleted there', async () => {
    const { out, vols } = await packSplit('v1');
    expect(vols.length).toBeGreaterThanOrEqual(3);
    const mediaA = join(dir, `mediaA-${n}`);
    const mediaB = join(dir, `mediaB-${n++}`);
    await mkdir(mediaA);
    await mkdir(mediaB);
    for (const [i, v] of vols.entries()) await rename(v, join(i % 2 === 0 ? mediaA : mediaB, basename(v)));
    await rm(out, { recursive: true });
    await chmodTree(mediaA, 0o555);
    await chmodTree(mediaB, 0o555);
    for (const m of [mediaA, mediaB]) for (const f of await readdir(m)) await chmod(join(m, f), 0o444);
    const before = await snapshot([mediaA, mediaB]);
    const first = join(mediaA, basename(vols[0]!));

    const store = join(dir, `store-${n++}`);
    await mkdir(store);
    const nobody = asNobody(); // as root, chmod stops nothing: run as nobody, whom the modes do stop
    if (nobody.uid !== undefined) await chown(store, nobody.uid, nobody.gid!);
    const v = await airlockAsync(['verify', first, '--volumes', mediaB, '--trust', key.pubPath, '--json'], { ...nobody, cwd: '/' });
    expect(v.stderr).toBe('');
    expect(v.status).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, version: 'v1', volumes: { count: vols.length } });
    const imp = await airlockAsync(['import', first, '--volumes', mediaB, '--store', store, '--trust', key.pubPath, '--no-precompress'], {
      ...nobody,
      cwd: '/',
      timeoutMs: 60_000,
    });
    expect(imp.stderr).toMatch(/volume 1\/\d+ ok/);
    expect(imp.status).toBe(0);
    expect(imp.stdout).toMatch(/imported v1/);
    expect(await snapshot([mediaA, mediaB])).toBe(before);
    const list = airlock(['list', '--store', store, '--json']);
    expect(list.stdout).toContain('"v1"');
  }, 60_000);

  it('the whole set given as paths, in any order, imports; importing it again is a no-op', async () => {
    const { vols } = await packSplit('v2');
    const store = join(dir, `store-${n++}`);
    const args = ['import', ...[...vols].reverse(), '--store', store, '--trust', key.pubPath, '--no-precompress'];
    expect(airlock(args).status).toBe(0);
    const again = airlock(args);
    expect(again.status).toBe(0);
    expect(again.stdout).toMatch(/unchanged/);
  });

  it('a damaged volume is named on its own (exit 4, "copy it again"), nothing is imported; re-copying just that volume fixes it', async () => {
    const { vols } = await packSplit('v3');
    const good = `${vols[1]!}.good`;
    await copyFile(vols[1]!, good);
    const fh = await open(vols[1]!, 'r+');
    await fh.write(Buffer.from('X'), 0, 1, (await fh.stat()).size - 100);
    await fh.close();
    const store = join(dir, `store-${n++}`);
    await mkdir(store);
    const before = await treeDigest(store);
    const r = airlock(['import', vols[0]!, '--store', store, '--trust', key.pubPath]);
    expect(r.status).toBe(4);
    const error = r.stderr.split('\n').find((l) => l.includes('error:'))!;
    expect(error).toContain(vols[1]!);
    expect(error).not.toContain(vols[0]!);
    expect(error).not.toContain(vols[2]!);
    expect(error).toMatch(/copy it again/);
    expect(error).toContain('AIRLOCK_VOLUME_DIGEST');
    expect(await treeDigest(store)).toBe(before);
    await rename(good, vols[1]!);
    expect(airlock(['import', vols[0]!, '--store', store, '--trust', key.pubPath, '--no-precompress']).status).toBe(0);
  });

  it('missing volume: exit 4 naming it and the folders searched; store untouched', async () => {
    const { out, vols } = await packSplit('v4');
    await rm(vols[vols.length - 1]!);
    const store = join(dir, `store-${n++}`);
    const r = airlock(['verify', vols[0]!, '--trust', key.pubPath]);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain(basename(vols[vols.length - 1]!));
    expect(r.stderr).toContain(out);
    expect(airlock(['import', vols[0]!, '--store', store, '--trust', key.pubPath]).status).toBe(4);
    await expect(stat(store)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it("inspect of any volume lists the set: index, count, and each payload's size and sha256 (checkable with tail | sha256sum)", async () => {
    const { vols } = await packSplit('v5');
    const r = airlock(['inspect', vols[1]!, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const j = JSON.parse(r.stdout) as {
      kind: string;
      index: number;
      count: number;
      headerBytes: number;
      table: { volumes: { size: number; sha256: string }[] };
    };
    expect(j).toMatchObject({ kind: 'volume', index: 2, count: vols.length });
    const { readFile } = await import('node:fs/promises');
    const { createHash } = await import('node:crypto');
    for (const [i, v] of vols.entries()) {
      const payload = (await readFile(v)).subarray(j.headerBytes);
      expect(payload.length).toBe(j.table.volumes[i]!.size);
      expect(createHash('sha256').update(payload).digest('hex')).toBe(j.table.volumes[i]!.sha256);
    }
    expect(airlock(['inspect', vols[0]!]).stdout).toMatch(/volume .*: 1 of \d+ of docs\.example\.com-v5\.airlock/);
  });

  it('usage: a bad --split is exit 2 before any work; several paths that are not volumes are exit 2', async () => {
    const r = airlock(['pack', join(dir, 'nope.tar.gz'), '--domain', 'docs.example.com', '--split', '3 parsecs']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('--split');
    const a = join(dir, 'a.txt');
    await writeFile(a, 'not a volume');
    expect(airlock(['verify', a, a]).status).toBe(2);
  });
});

describe('airlock delta --split and fetch --split (CLI)', () => {
  it('a --volumes entry that is not a folder (a FIFO, a device, a regular file, a missing name) is exit 2 naming it, before any work', async () => {
    const { vols } = await packSplit('vnf');
    const d = join(dir, `nf-${n++}`);
    await mkdir(d);
    const fifo = join(d, 'fifo1');
    const { execFileSync } = await import('node:child_process');
    execFileSync('mkfifo', [fifo]);
    await writeFile(join(d, 'plain'), 'x');
    const cases: [string, RegExp][] = [
      [fifo, /--volumes: .*fifo1 is a FIFO \(named pipe\), not a folder/],
      ['/dev/zero', /--volumes: \/dev\/zero is a character device, not a folder/],
      [join(d, 'plain'), /--volumes: .*plain is a regular file, not a folder/],
      [join(d, 'a\x1b[31mb'), /--volumes: .*a\\x1b\[31mb does not exist/],
    ];
    for (const [entry, words] of cases) {
      const store = join(d, 'store');
      const r = await airlockAsync(['import', vols[0]!, '--volumes', `${d},${entry}`, '--store', store, '--trust', key.pubPath], { timeoutMs: 20_000 });
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/\[AIRLOCK_USAGE\]\n?$/);
      expect(r.stderr).toMatch(words);
      expect(r.stderr).not.toContain('\x1b');
      expect(
        await stat(store).then(
          () => true,
          () => false,
        ),
      ).toBe(false);
    }
  });

  it('a delta split into volumes imports from its volumes onto its base', async () => {
    const work = join(dir, `delta-${n++}`);
    await mkdir(work);
    const v1 = await buildPackage(work, { version: 'v1', files: sampleSite('one', 30), key });
    const f2 = sampleSite('one', 31);
    f2['guide/start.html'] = '<h1>Start, edited</h1>';
    const v2 = await buildPackage(work, { version: 'v2', files: f2, key });
    const out = join(work, 'out');
    const d = airlock(['delta', v1, v2, '--out', out, '--sign-key', keyPath(), '--split', '4KiB', '--json']);
    expect(d.status).toBe(0);
    const vols = (JSON.parse(d.stdout) as { volumes: { volumes: string[] } }).volumes.volumes;
    expect(vols.length).toBeGreaterThanOrEqual(2);
    expect((await readdir(out)).sort()).toEqual(['docs.example.com-v2.full.airlock', ...vols.map((v) => basename(v))].sort());
    const store = join(dir, `store-${n++}`);
    expect(airlock(['import', v1, '--store', store, '--trust', key.pubPath, '--no-precompress']).status).toBe(0);
    const imp = airlock(['import', vols[0]!, '--store', store, '--trust', key.pubPath, '--no-precompress', '--json']);
    expect(imp.status, imp.stderr).toBe(0);
    expect(JSON.parse(imp.stdout)).toMatchObject({ version: 'v2', status: 'imported', volumes: { count: vols.length } });
  });

  it('fetch --split writes volumes that verify', async () => {
    const r: Rig = await rig();
    try {
      const {
        status: code,
        stdout,
        stderr,
      } = await airlockAsync(
        ['fetch', '--domain', 'docs.example.com', '--out', r.out, '--version-label', 'v1', '--sign-key', keyPath(), '--split', '12KiB', '--json'],
        { env: { AIRLOCK_API_URL: r.emu.url, AIRLOCK_ADMIN_KEY: r.emu.keys.admin }, bareEnv: true, stdin: 'ignore' },
      );
      expect(code, stderr).toBe(0);
      const vols = (JSON.parse(stdout) as { volumes: { volumes: string[] } }).volumes.volumes;
      expect(vols.length).toBeGreaterThanOrEqual(2);
      expect(airlock(['verify', vols[vols.length - 1]!, '--trust', key.pubPath]).status).toBe(0);
    } finally {
      await r.close();
    }
  });
});
