/**
 * A package split into volumes that import refuses, through the built binary: a volume missing,
 * swapped, truncated, tampered with, or a FIFO in its place. Each is refused in words naming the
 * volume, with its code (exit 4); the store is unchanged but for one line in its audit log that
 * records the refusal with that code, as every other refused import is recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cp, mkdir, open, readFile, rename, rm, symlink, truncate } from 'node:fs/promises';
import { join } from 'node:path';
import { importPackage } from '../../src/store/index.js';
import { splitPackage } from '../../src/package/volumes/index.js';
import { airlockAsync, type RunResult } from '../helpers/bin.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, type TestKey } from '../store/helpers.js';
import { lastAudit, storeDigest } from '../store/trust-helpers.js';

let dir: string;
let key: TestKey;
let pristine: string;
let n = 0;

beforeAll(async () => {
  dir = await makeTempDir('airlock-volumes-hostile-');
  key = await makeKey(dir);
  pristine = join(dir, 'pristine');
  await importPackage(await buildPackage(dir, { version: 'v1', files: sampleSite('v1'), key }), { store: pristine, trust: [key.pub] });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const fresh = (tag: string) => join(dir, `${tag}-${++n}`);

/** Version v2 of the site, signed, split into volumes of 4 KiB in a folder of its own (at least three). */
async function volumes(): Promise<string[]> {
  const media = fresh('media');
  await mkdir(media);
  const whole = await buildPackage(media, { version: 'v2', files: sampleSite('v2', 20), key, name: 'v2.airlock' });
  const { volumes: vols } = await splitPackage(whole, { split: 4096, signKey: key.priv });
  await rm(whole);
  expect(vols.length).toBeGreaterThan(2);
  return vols;
}

const lines = async (store: string) => (await readFile(join(store, 'audit.log'), 'utf8')).split('\n').filter(Boolean);

/** Exit 4 with `code` last on stderr, the bad volume named in words; no errno or V8 text. */
function refused(r: RunResult, code: string, words: RegExp, volume: string): void {
  expect(r.signal, `killed: ${r.stderr}`).toBeNull();
  expect(r.status, r.stderr).toBe(4);
  expect(r.stderr).toMatch(new RegExp(`\\[${code}\\]\\n?$`));
  expect(r.stderr).toMatch(words);
  expect(r.stderr).toContain(volume);
  expect(r.stderr).not.toMatch(/\b(ENOENT|ENXIO|EAGAIN|AIRLOCK_INTERNAL)\b/);
}

describe('a refused import of volumes is audited like any other refused import', () => {
  const cases: [string, (vols: string[]) => Promise<void>, string, RegExp][] = [
    ['a volume missing', (v) => rm(v[1]!), 'AIRLOCK_VOLUME_MISSING', /volume 2 of \d+ \(v2\.airlock\.002\) is missing/],
    [
      'two volumes swapped',
      async (v) => {
        await rename(v[1]!, `${v[1]!}.x`);
        await rename(v[2]!, v[1]!);
        await rename(`${v[1]!}.x`, v[2]!);
      },
      'AIRLOCK_VOLUME_ORDER',
      /is named as volume 2 but holds volume 3/,
    ],
    ['a volume truncated', (v) => truncate(v[1]!, 3000), 'AIRLOCK_VOLUME_TRUNCATED', /v2\.airlock\.002 is truncated: 3000 bytes/],
    [
      'a volume tampered with',
      async (v) => {
        const fh = await open(v[1]!, 'r+');
        await fh.write(Buffer.from('X'), 0, 1, 3500);
        await fh.close();
      },
      'AIRLOCK_VOLUME_DIGEST',
      /v2\.airlock\.002 does not match the sha256 in the signed volume table/,
    ],
    [
      'a FIFO in the place of a volume',
      async (v) => {
        await rm(v[1]!);
        execFileSync('mkfifo', [v[1]!]);
      },
      'AIRLOCK_VOLUME_NOT_A_FILE',
      /v2\.airlock\.002\) is a FIFO \(named pipe\), not a regular file/,
    ],
    [
      'a loop of symbolic links in the place of a volume',
      async (v) => {
        await rm(v[1]!);
        await symlink(v[1]!, v[1]!);
      },
      'AIRLOCK_VOLUME_NOT_A_FILE',
      /v2\.airlock\.002\) is a loop of symbolic links/,
    ],
  ];
  for (const [what, damage, code, words] of cases) {
    it(`${what}: exit 4 ${code} naming it; the store is unchanged but for one audit line recording the refusal`, async () => {
      const vols = await volumes();
      await damage(vols);
      const store = fresh('store');
      await cp(pristine, store, { recursive: true });
      const before = await storeDigest(store);
      const log = await lines(store);
      const r = await airlockAsync(['import', vols[0]!, '--store', store, '--trust', key.pubPath], { timeoutMs: 15_000 });
      refused(r, code, words, 'v2.airlock.00');
      expect(await storeDigest(store)).toBe(before);
      const after = await lines(store);
      expect(after.slice(0, log.length)).toEqual(log);
      expect(after.length).toBe(log.length + 1);
      const line = await lastAudit(store);
      expect(line).toMatchObject({ command: 'import', outcome: 'refused', reason: code, package: vols[0] });
      expect(line.detail).toMatch(words);
      const check = await airlockAsync(['audit', 'verify', '--store', store]);
      expect(check.status, check.stderr).toBe(0);
    });
  }
});
