/**
 * Bounded mutation fuzz of the store's own files, the ones an operator may hand-edit or a disk
 * may damage (state.json, versions/V/version.json, leases/<pid>.json, lock): the readers either
 * accept a value of the right shape or refuse with exit 2 naming the file; never another error.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { acquireLock, importPackage, readLeases, readState } from '../../src/store/index.js';
import { readMeta } from '../../src/store/meta.js';
import { self } from '../../src/store/proc.js';
import { jsonMutants, mutants } from '../helpers/mutate.js';
import { buildPackage, makeTempDir, sampleSite, storeCopies } from './helpers.js';

const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
let dir: string;
let pristine: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-files-fuzz-');
  pristine = join(dir, 'pristine');
  for (const v of ['v1', 'v2']) {
    const pkg = await buildPackage(dir, { version: v, files: sampleSite(v) });
    await importPackage(pkg, { store: pristine, trust: [], allowUnsigned: true, activate: true });
  }
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const copyOf = storeCopies();
const copyStore = (): Promise<string> => copyOf(dir, pristine);
/** Array nesting depth, counted without recursion. */
function depth(v: unknown): number {
  let d = 0;
  while (Array.isArray(v) && v.length === 1) {
    d++;
    v = v[0];
  }
  return d;
}
/** JSON text of a mutant; the 5,000-deep arrays jsonMutants makes are written without recursion. */
function toJsonText(value: unknown): string {
  const deep: number[] = [];
  const text = JSON.stringify(value, (_k, v: unknown) => {
    const d = depth(v);
    if (d < 100) return v;
    deep.push(d);
    return `@@deep${deep.length - 1}@@`;
  });
  return text.replace(/"@@deep(\d+)@@"/g, (_m, i: string) => '['.repeat(deep[Number(i)]!) + '1' + ']'.repeat(deep[Number(i)]!));
}

/** Byte mutants and JSON-structure mutants of one file's content. */
function* allMutants(text: string, count: number, seed: number): Generator<{ bytes: Buffer; what: string }> {
  for (const m of mutants(Buffer.from(text), count, seed)) yield { bytes: m.bytes, what: `bytes #${m.index} ${m.mutation}@${m.at}` };
  for (const m of jsonMutants(JSON.parse(text), count, seed + 1)) {
    yield { bytes: Buffer.from(m.value === undefined ? '' : toJsonText(m.value)), what: `json #${m.index} ${m.what}` };
  }
}
const refusedWith2 = (code: string) => expect.objectContaining({ code, exitCode: 2, details: expect.objectContaining({ subject: expect.any(String) }) });

describe('store files under mutation', () => {
  it('state.json: a state of the right shape (labels or null) or AIRLOCK_BAD_STATE, exit 2', async () => {
    const store = await copyStore();
    const text = await readFile(join(store, 'state.json'), 'utf8');
    for (const m of allMutants(text, 150, 0x57a7e)) {
      await writeFile(join(store, 'state.json'), m.bytes);
      try {
        const s = await readState(store);
        for (const p of [s.active, s.previous]) if (p !== null) expect(p, m.what).toMatch(LABEL);
      } catch (err) {
        expect(err, m.what).toEqual(refusedWith2('AIRLOCK_BAD_STATE'));
      }
    }
  });

  it('version.json: metadata whose label is its folder and whose printed fields are clean, or AIRLOCK_BAD_VERSION, exit 2', async () => {
    const store = await copyStore();
    const vdir = join(store, 'versions', 'v1');
    const text = await readFile(join(vdir, 'version.json'), 'utf8');
    for (const m of allMutants(text, 150, 0x7e55)) {
      await writeFile(join(vdir, 'version.json'), m.bytes);
      try {
        const meta = await readMeta(vdir);
        expect(meta.label, m.what).toBe('v1');
        // eslint-disable-next-line no-control-regex -- control characters are what list must never print
        expect(meta.domain, m.what).not.toMatch(/[\u0000-\u001f]/);
      } catch (err) {
        expect(err, m.what).toEqual(refusedWith2('AIRLOCK_BAD_VERSION'));
      }
    }
  });

  it('leases/<pid>.json: only well-formed leases of live pids on valid labels count; nothing throws', async () => {
    const store = await copyStore();
    await mkdir(join(store, 'leases'));
    const path = join(store, 'leases', `${self.pid}.json`);
    const text = JSON.stringify({ ...self, version: 'v1', startedAt: new Date().toISOString() });
    for (const m of allMutants(text, 150, 0x1ea5e)) {
      await writeFile(path, m.bytes);
      const leases = await readLeases(store);
      for (const l of leases) {
        expect(l.pid, m.what).toBe(self.pid);
        expect(l.version, m.what).toMatch(LABEL);
      }
    }
  });

  it('lock: a damaged lock of a dead holder is taken over; nothing else is thrown, nothing waits', async () => {
    const store = await copyStore();
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    const text = JSON.stringify({ pid: dead.pid, start: '12345', nonce: 'abc', since: new Date().toISOString() });
    for (const m of allMutants(text, 60, 0x10c4)) {
      await writeFile(join(store, 'lock'), m.bytes);
      const t0 = Date.now();
      const lock = await acquireLock(store, { timeoutMs: 1_000 }).catch((err: unknown) => {
        // Only a mutant naming a live process may keep the lock, and then it says so.
        expect(err, m.what).toMatchObject({ code: 'AIRLOCK_STORE_LOCKED' });
        return null;
      });
      expect(Date.now() - t0, m.what).toBeLessThan(5_000);
      await lock?.release();
      await rm(join(store, 'lock'), { force: true });
    }
  });
});
