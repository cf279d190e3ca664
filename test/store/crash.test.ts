import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, access } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { importPackage, listVersions, readState, loadVersion } from '../../src/store/index.js';
import { buildPackage, makeTempDir, sampleSite } from './helpers.js';

const CRASHER = fileURLToPath(new URL('./fixtures/crash-import.ts', import.meta.url));
let dir: string;
let pkg: string;
beforeAll(async () => {
  dir = await makeTempDir();
  // Enough files that extraction takes long enough to be interrupted while it writes.
  pkg = await buildPackage(dir, { version: 'v1', files: sampleSite('crash', 400) });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Every version `list` shows must be whole: each manifest file present with its digest. */
async function assertConsistent(store: string): Promise<string[]> {
  const versions = await listVersions(store);
  for (const v of versions) {
    const loaded = await loadVersion(store, v.version);
    for (const f of loaded.manifest.files) {
      const body = await readFile(join(loaded.siteDir, f.path));
      expect(createHash('sha256').update(body).digest('hex')).toBe(f.sha256);
    }
  }
  return versions.map((v) => v.version);
}

describe('crash safety: import killed with SIGKILL', () => {
  for (const point of ['extract', 'extracted', 'committed'] as const) {
    it(`killed at "${point}": list shows no partial version, garbage is cleaned, re-import succeeds`, async () => {
      const store = join(dir, `store-${point}`);
      const r = spawnSync(process.execPath, ['--import', 'tsx', CRASHER, pkg, store, point], { encoding: 'utf8', timeout: 30_000 });
      expect(r.signal).toBe('SIGKILL');
      expect(r.stdout).toContain(`killed at ${point}`);
      await access(join(store, 'lock')); // the dead process's lock is still there
      const listed = await assertConsistent(store);
      expect((await readState(store)).active).toBeNull(); // killed before the state write every time
      if (point === 'committed') {
        expect(listed).toEqual(['v1']); // the rename happened: the version is whole
      } else {
        expect(listed).toEqual([]);
        expect((await readdir(join(store, 'staging'))).length).toBe(1); // the half-built garbage
      }
      const again = await importPackage(pkg, { store, trust: [], allowUnsigned: true, activate: true, lockTimeoutMs: 5000 });
      expect(again).toMatchObject({ version: 'v1', status: point === 'committed' ? 'unchanged' : 'imported', activated: true });
      expect(await assertConsistent(store)).toEqual(['v1']);
      expect((await readState(store)).active).toBe('v1');
      expect((await readdir(store)).sort()).toEqual(['audit.head', 'audit.log', 'state.json', 'trust', 'versions']); // staging and lock gone
    });
  }
});
