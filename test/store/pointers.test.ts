import { afterEach, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { readdir, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { activate, rollback, listVersions, readState, prune, planPrune, acquireLease, resolveStore } from '../../src/store/index.js';
import { fakeVersion } from './fake.js';
import { makeTempDir } from './helpers.js';
import { readAudit, verifyAudit } from '../../src/store/audit.js';

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});
/** The store's audit lines after the hand-made versions' own. */
const changes = async (store: string) => (await readAudit(store)).filter((l) => l.command !== 'test');
async function storeWith(...labels: string[]): Promise<string> {
  const store = await makeTempDir();
  dirs.push(store);
  for (const [i, l] of labels.entries()) await fakeVersion(store, l, new Date(Date.UTC(2024, 0, 1 + i)).toISOString());
  return store;
}

describe('resolveStore', () => {
  it('prefers --store, then AIRLOCK_STORE, then ./airlock-store', () => {
    expect(resolveStore('/a', { AIRLOCK_STORE: '/b' }, '/c')).toBe('/a');
    expect(resolveStore(undefined, { AIRLOCK_STORE: '/b' }, '/c')).toBe('/b');
    expect(resolveStore(undefined, {}, '/c')).toBe('/c/airlock-store');
  });
  it('an empty --store or AIRLOCK_STORE is refused, never taken as the default', () => {
    expect(() => resolveStore('', {}, '/c')).toThrow('--store is empty');
    expect(() => resolveStore(undefined, { AIRLOCK_STORE: '' }, '/c')).toThrow('AIRLOCK_STORE is set but empty');
  });
});

describe('activate and rollback', () => {
  it('activate records active and previous durably in state.json; rollback swaps them', async () => {
    const store = await storeWith('v1', 'v2');
    await activate(store, 'v1');
    await activate(store, 'v2');
    expect(JSON.parse(await readFile(join(store, 'state.json'), 'utf8'))).toMatchObject({ active: 'v2', previous: 'v1' });
    await expect(rollback(store)).resolves.toBe('v1');
    expect(await readState(store)).toMatchObject({ active: 'v1', previous: 'v2' });
    await expect(rollback(store)).resolves.toBe('v2');
    expect((await changes(store)).map((l) => `${l.command} ${l.outcome} ${l.version}`)).toEqual([
      'activate activated v1',
      'activate activated v2',
      'rollback rolled-back v1',
      'rollback rolled-back v2',
    ]);
    expect((await readdir(store)).sort()).toEqual(['audit.head', 'audit.log', 'state.json', 'versions']); // no temp or lock files left
  });

  it('re-activating the active version keeps previous', async () => {
    const store = await storeWith('v1', 'v2');
    await activate(store, 'v1');
    await activate(store, 'v2');
    await activate(store, 'v2');
    expect(await readState(store)).toMatchObject({ active: 'v2', previous: 'v1' });
  });

  it('an unknown label is AIRLOCK_VERSION_NOT_FOUND and changes nothing', async () => {
    const store = await storeWith('v1');
    await activate(store, 'v1');
    const before = await readFile(join(store, 'state.json'), 'utf8');
    await expect(activate(store, 'v9')).rejects.toMatchObject({ code: 'AIRLOCK_VERSION_NOT_FOUND' });
    expect(await readFile(join(store, 'state.json'), 'utf8')).toBe(before);
  });

  it('path traversal: a label like ../x is refused before any path is built', async () => {
    const store = await storeWith('v1');
    await expect(activate(store, '../v1')).rejects.toMatchObject({ code: 'AIRLOCK_BAD_LABEL' });
  });

  it('rollback without a previous version is AIRLOCK_NO_PREVIOUS', async () => {
    const store = await storeWith('v1');
    await activate(store, 'v1');
    await expect(rollback(store)).rejects.toMatchObject({ code: 'AIRLOCK_NO_PREVIOUS' });
  });

  it('a damaged state.json is reported, never silently reset', async () => {
    const store = await storeWith('v1');
    await writeFile(join(store, 'state.json'), '{"active": 1');
    await expect(readState(store)).rejects.toMatchObject({ code: 'AIRLOCK_BAD_STATE' });
  });
});

describe('list', () => {
  it('lists versions newest first with active and previous marks', async () => {
    const store = await storeWith('v1', 'v2', 'v3');
    await activate(store, 'v1');
    await activate(store, 'v2');
    const list = await listVersions(store);
    expect(list.map((v) => [v.version, v.active, v.previous])).toEqual([
      ['v3', false, false],
      ['v2', true, false],
      ['v1', false, true],
    ]);
  });

  it('an empty or missing store lists nothing', async () => {
    const store = await storeWith();
    await expect(listVersions(join(store, 'nope'))).resolves.toEqual([]);
  });
});

describe('prune', () => {
  it('planPrune keeps the N newest and every protected version, with every reason that holds', () => {
    const none = { active: null, previous: null };
    const deleted = (plan: ReturnType<typeof planPrune>) => plan.filter((e) => e.deleted).map((e) => e.version);
    expect(deleted(planPrune(['v5', 'v4', 'v3', 'v2', 'v1'], 2, { active: 'v1', previous: null }, []))).toEqual(['v3', 'v2']);
    expect(deleted(planPrune(['v2', 'v1'], 0, none, []))).toEqual(['v2', 'v1']);
    expect(deleted(planPrune(['v1'], 5, none, []))).toEqual([]);
    expect(
      planPrune(['v4', 'v3', 'v2', 'v1'], 1, { active: 'v4', previous: 'v2' }, [
        { pid: 7, version: 'v2' },
        { pid: 9, version: 'v2' },
      ]),
    ).toEqual([
      { version: 'v4', deleted: false, reasons: [{ why: 'newest', keep: 1 }, { why: 'active' }] },
      { version: 'v3', deleted: true, reasons: [] },
      { version: 'v2', deleted: false, reasons: [{ why: 'previous' }, { why: 'leased', pids: [7, 9] }] },
      { version: 'v1', deleted: true, reasons: [] },
    ]);
  });

  it('deletes old versions but never the active or previous one', async () => {
    const store = await storeWith('v1', 'v2', 'v3', 'v4', 'v5');
    await activate(store, 'v1');
    await activate(store, 'v2');
    const deleted = await prune(store, 1);
    expect(deleted.sort()).toEqual(['v3', 'v4']);
    expect((await listVersions(store)).map((v) => v.version)).toEqual(['v5', 'v2', 'v1']);
    expect((await readdir(store)).sort()).toEqual(['audit.head', 'audit.log', 'state.json', 'versions']);
    // Trust policy: every store records activations and prunes in its audit log.
    expect((await changes(store)).map((l) => `${l.command} ${l.outcome} ${l.version ?? ''}`)).toEqual([
      'activate activated v1',
      'activate activated v2',
      'prune pruned ',
    ]);
    expect((await changes(store))[2]!.detail).toMatch(/^keep 1; deleted v[34], v[34]$/);
    expect((await verifyAudit(store)).ok).toBe(true);
  });

  it("never deletes a version leased by a live server; a dead server's lease is ignored and removed", async () => {
    const store = await storeWith('v1', 'v2', 'v3');
    const lease = await acquireLease(store, 'v1');
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    await mkdir(join(store, 'leases'), { recursive: true });
    await writeFile(join(store, 'leases', `${dead.pid}.json`), JSON.stringify({ pid: dead.pid, start: '1', version: 'v2', startedAt: 'then' }));
    expect(await prune(store, 1)).toEqual(['v2']);
    expect(await readdir(join(store, 'leases'))).toEqual([`${process.pid}.json`]);
    await lease.update('v3');
    expect(await prune(store, 0)).toEqual(['v1']);
    await lease.release();
    expect(await prune(store, 0)).toEqual(['v3']);
  });

  it('a lease on an unknown version is refused', async () => {
    const store = await storeWith('v1');
    await expect(acquireLease(store, 'v7')).rejects.toMatchObject({ code: 'AIRLOCK_VERSION_NOT_FOUND' });
    expect(await readdir(join(store, 'leases'))).toEqual([]);
  });
});
