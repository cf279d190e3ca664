/**
 * `prune` stopped by a signal part-way, through the built binary: it stops between two versions
 * (each wholly there or wholly gone), releases the lock, leaves no staging folder, says what it
 * deleted and what is still there (exit 1, AIRLOCK_INTERRUPTED), and its audit log, which recorded
 * the prune before it began, gets a `failed` line naming what did not go.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { watch } from 'node:fs';
import { mkdir, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { importPackage, listVersions, verifyAudit } from '../../src/store/index.js';
import { startAirlock } from '../helpers/bin.js';
import { buildPackage, makeKey, makeTempDir, sampleSite } from '../store/helpers.js';
import { lastAudit } from '../store/trust-helpers.js';

let dir: string;
let store: string;
const LABELS = ['v1', 'v2', 'v3', 'v4', 'v5'];

beforeAll(async () => {
  dir = await makeTempDir('airlock-prune-interrupted-');
  const key = await makeKey(dir);
  store = join(dir, 'store');
  // Versions of a few thousand files each, so that deleting one takes long enough to be stopped between two.
  for (const v of LABELS) {
    const pkg = await buildPackage(dir, { version: v, files: sampleSite(v, 1500), key, name: `${v}.airlock` });
    await importPackage(pkg, { store, trust: [key.pub], activate: v === 'v5' });
  }
}, 240_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('prune stopped part-way', () => {
  it('SIGTERM while it deletes: exit 1 AIRLOCK_INTERRUPTED naming what went and what stayed; no lock, no staging; the audit log verifies and ends with a failed line', async () => {
    await mkdir(join(store, 'staging'), { recursive: true });
    const p = startAirlock(['prune', '--keep', '0', '--store', store]);
    await new Promise<void>((resolve, reject) => {
      const w = watch(join(store, 'staging'), (_e, name) => {
        if (name && name.startsWith('prune-')) {
          w.close();
          p.kill('SIGTERM');
          resolve();
        }
      });
      void p.exit().then(() => {
        w.close();
        reject(new Error(`prune ended before it deleted anything: ${p.stderr()}`));
      });
    });
    const { code } = await p.exit(60_000);
    expect(code, p.stderr()).toBe(1);
    expect(p.stderr()).toMatch(/interrupted by SIGTERM; prune stopped: deleted .*; still in the store: .*\[AIRLOCK_INTERRUPTED\]/);
    const left = (await listVersions(store)).map((v) => v.version);
    expect(left).toContain('v5'); // the active one is never a candidate
    expect(left.length).toBeGreaterThan(1); // stopped before the end
    const entries = await readdir(store);
    expect(entries).not.toContain('lock');
    expect(entries).not.toContain('staging');
    expect((await verifyAudit(store)).ok).toBe(true);
    const last = await lastAudit(store);
    expect(last).toMatchObject({ command: 'prune', outcome: 'failed', reason: 'AIRLOCK_INTERRUPTED' });
    for (const v of left.filter((l) => l !== 'v5')) expect(String(last.detail)).toContain(v);
  });
});
