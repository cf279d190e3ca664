/**
 * A big package split into FAT32-class volumes, verified and imported from read-only media, in
 * bounded time and disk. The export is generated cheaply: a plain tar whose big member is all
 * zeros, made sparse by truncate (no bytes written), and the volume writer leaves zero runs as
 * holes. Default size 256 MiB, split so the set has the shape of a 10 GB package on FAT32 (three
 * volumes, the split scaled by the same ratio). The full case — 10 GB with the real `fat32`
 * preset — runs with AIRLOCK_TEST_VOLUME_BYTES=10000000000 (tens of minutes on a shared disk, and
 * about 2× that much disk for the store's copy of the package and its extracted file). The fat32 preset's arithmetic at 10 GB is checked
 * exactly in test/package/volumes.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, chown, mkdir, open, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Header } from 'tar';
import { airlock, airlockAsync, asNobody } from '../helpers/bin.js';
import { makeKey, makeTempDir, type TestKey } from '../store/helpers.js';
import { SPLIT_PRESETS } from '../../src/package/volumes/index.js';

const BYTES = Number(process.env.AIRLOCK_TEST_VOLUME_BYTES ?? 256 * 1024 * 1024);
const FULL = 10_000_000_000;
const SPLIT = BYTES >= FULL ? 'fat32' : String(Math.floor((BYTES * SPLIT_PRESETS.fat32!) / FULL));
// The default case stays under a minute; an override gets 1 s per 4 MB (10 GB: ~42 min) for pack, verify and import.
const LIMIT_MS = Math.max(55_000, Math.ceil(BYTES / 4_000));

let dir: string;
let key: TestKey;
beforeAll(async () => {
  dir = await makeTempDir('airlock-volumes-big-');
  await chmod(dir, 0o755);
  key = await makeKey(dir);
  await writeFile(join(dir, 'signer.key'), key.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** export.tar: index.html, then big.bin of `size` zero bytes; everything after big.bin's header is a hole. */
async function sparseExport(path: string, size: number): Promise<void> {
  const block = (name: string, n: number) => {
    const b = Buffer.alloc(512);
    new Header({ path: name, mode: 0o644, size: n, mtime: new Date('2025-01-01T00:00:00Z'), type: 'File' }).encode(b, 0);
    return b;
  };
  const index = Buffer.from('<!doctype html><title>big</title><p>A big site.</p>');
  const head = Buffer.concat([block('index.html', index.length), index, Buffer.alloc(512 - index.length), block('big.bin', size)]);
  const fh = await open(path, 'w');
  await fh.write(head, 0, head.length, 0);
  await fh.truncate(head.length + Math.ceil(size / 512) * 512 + 1024);
  await fh.close();
}

describe('a FAT32-class split of a big package', () => {
  it(
    `${BYTES} bytes split at ${SPLIT}: three volumes, verified and imported from a read-only folder, nothing written there`,
    async () => {
      const started = Date.now();
      const archive = join(dir, 'export.tar');
      await sparseExport(archive, BYTES);
      const media = join(dir, 'media');
      const p = airlock(
        [
          'pack',
          archive,
          '--domain',
          'big.example.com',
          '--version-label',
          'v1',
          '--sign-key',
          join(dir, 'signer.key'),
          '--out',
          media,
          '--split',
          SPLIT,
          '--json',
        ],
        { timeoutMs: LIMIT_MS },
      );
      expect(p.status, p.stderr).toBe(0);
      await rm(archive);
      const vols = (JSON.parse(p.stdout) as { volumes: { volumes: string[]; volumeBytes: number } }).volumes;
      expect(vols.volumes.length).toBe(3);
      for (const v of vols.volumes) expect((await stat(v)).size).toBeLessThanOrEqual(BYTES >= FULL ? 4000 * 1024 * 1024 : Number(SPLIT));
      // Holes: the volumes hold almost no disk blocks though they are BYTES long.
      const allocated = (await Promise.all(vols.volumes.map(async (v) => (await stat(v)).blocks * 512))).reduce((a, b) => a + b, 0);
      expect(allocated).toBeLessThan(BYTES / 4);

      await chmod(media, 0o555);
      for (const v of vols.volumes) await chmod(v, 0o444);
      const snap = async () =>
        (
          await Promise.all(
            (await readdir(media)).sort().map(async (f) => {
              const s = await stat(join(media, f));
              return `${f} ${s.size} ${s.mtimeMs} ${s.ctimeMs}`;
            }),
          )
        ).join('\n');
      const before = await snap();
      const nobody = asNobody();
      const store = join(dir, 'store');
      await mkdir(store);
      if (nobody.uid !== undefined) await chown(store, nobody.uid, nobody.gid!);
      const left = () => Math.max(5_000, LIMIT_MS - (Date.now() - started));
      const v = await airlockAsync(['verify', vols.volumes[0]!, '--trust', key.pubPath, '--json'], { ...nobody, cwd: '/', timeoutMs: left() });
      expect(v.status, v.stderr).toBe(0);
      expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, bytes: BYTES + 51, volumes: { count: 3 } });
      const imp = await airlockAsync(['import', vols.volumes[2]!, '--store', store, '--trust', key.pubPath, '--no-precompress', '--json'], {
        ...nobody,
        cwd: '/',
        timeoutMs: left(),
      });
      expect(imp.status, imp.stderr).toBe(0);
      expect(JSON.parse(imp.stdout)).toMatchObject({ version: 'v1', status: 'imported' });
      expect(await snap()).toBe(before);
      expect((await stat(join(store, 'versions', 'v1', 'site', 'big.bin'))).size).toBe(BYTES);
      await chmod(media, 0o755);
    },
    LIMIT_MS + 5_000,
  );
});
