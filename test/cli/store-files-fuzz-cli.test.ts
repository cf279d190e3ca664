/**
 * Store files a user may hand-edit or a disk may damage, through the built binary:
 * with state.json, a version.json, a lease or the lock mutated, list/activate/rollback/prune
 * either work or fail with exit 2 and a code naming the file; no version is ever corrupted,
 * and prune never deletes a version the (damaged) state might mean.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { access, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { activate, importPackage } from '../../src/store/index.js';
import { startMarker } from '../../src/store/proc.js';
import { airlock, type RunResult } from '../helpers/bin.js';
import { jsonMutants, mutants } from '../helpers/mutate.js';
import { buildPackage, makeTempDir, sampleSite, treeDigest, storeCopies } from '../store/helpers.js';

const VERSIONS = ['v1', 'v2', 'v3'];
let dir: string;
let pristine: string;
const digests: Record<string, string> = {};
beforeAll(async () => {
  dir = await makeTempDir('airlock-store-files-cli-');
  pristine = join(dir, 'pristine');
  for (const v of VERSIONS) {
    const pkg = await buildPackage(dir, { version: v, files: sampleSite(v) });
    await importPackage(pkg, { store: pristine, trust: [], allowUnsigned: true });
  }
  await activate(pristine, 'v1');
  await activate(pristine, 'v2'); // active v2, previous v1, v3 unprotected
  for (const v of VERSIONS) digests[v] = await treeDigest(join(pristine, 'versions', v));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const copyOf = storeCopies();
const copyStore = (): Promise<string> => copyOf(dir, pristine);
/** A few byte mutants and a few JSON-structure mutants (the deep-nesting one excluded: its text is 10 kB of brackets). */
function* some(text: string, count: number, seed: number): Generator<{ bytes: Buffer; what: string }> {
  for (const m of mutants(Buffer.from(text), count, seed)) yield { bytes: m.bytes, what: `bytes ${m.mutation}@${m.at}` };
  for (const m of jsonMutants(JSON.parse(text), count * 2, seed + 1)) {
    if (m.what.endsWith('deep') || m.value === undefined) continue;
    yield { bytes: Buffer.from(JSON.stringify(m.value)), what: `json ${m.what}` };
  }
}
const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

/** Digests of each version folder (taken after the mutation: a mutated version.json is part of it). */
async function digestsOf(store: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const v of VERSIONS) out[v] = await treeDigest(join(store, 'versions', v));
  return out;
}

/** The contract's codes only, each error with a code; every version left is as it was before the command. */
async function check(store: string, r: RunResult, what: string, before: Record<string, string> = digests): Promise<string[]> {
  expect(r.signal, what).toBeNull();
  expect([0, 2], `${what}: ${r.stderr}`).toContain(r.status);
  if (r.status !== 0) expect(r.stderr, what).toMatch(/error: .*\[AIRLOCK_(BAD_STATE|BAD_VERSION|BAD_LABEL|STORE_PATH)\]\n?$/);
  expect(r.stderr, what).not.toContain('AIRLOCK_INTERNAL');
  const left: string[] = [];
  for (const v of VERSIONS) {
    if (!(await exists(join(store, 'versions', v)))) continue;
    left.push(v);
    expect(await treeDigest(join(store, 'versions', v)), `${what}: ${v} intact`).toBe(before[v]);
  }
  return left;
}

describe('store files mutated by hand or by a damaged disk', () => {
  it('state.json: prune fails closed (exit 2) or keeps what the state names; list answers or says which file', async () => {
    const text = await readFile(join(pristine, 'state.json'), 'utf8');
    for (const m of some(text, 4, 0x57a7e)) {
      const store = await copyStore();
      await writeFile(join(store, 'state.json'), m.bytes);
      const list = airlock(['list', '--store', store, '--json']);
      await check(store, list, `list, ${m.what}`);
      const prune = airlock(['prune', '--keep', '0', '--store', store]);
      const left = await check(store, prune, `prune, ${m.what}`);
      if (prune.status === 0) {
        const state = JSON.parse(m.bytes.toString()) as { active: string | null; previous: string | null };
        for (const p of [state.active, state.previous]) if (p) expect(left, m.what).toContain(p);
      } else {
        expect(left, m.what).toEqual(VERSIONS);
      }
    }
  });

  it('version.json: list and activate answer or refuse with exit 2 naming the file, never activate a damaged version', async () => {
    const text = await readFile(join(pristine, 'versions', 'v1', 'version.json'), 'utf8');
    for (const m of some(text, 3, 0x7e55)) {
      const store = await copyStore();
      await writeFile(join(store, 'versions', 'v1', 'version.json'), m.bytes);
      const before = await digestsOf(store);
      const list = airlock(['list', '--store', store]);
      await check(store, list, `list, ${m.what}`, before);
      if (list.status === 2) expect(list.stderr).toContain(join(store, 'versions', 'v1', 'version.json'));
      // eslint-disable-next-line no-control-regex -- control characters are what must not reach the terminal
      expect(list.stdout, m.what).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/);
      const act = airlock(['activate', 'v1', '--store', store]);
      await check(store, act, `activate, ${m.what}`, before);
      const state = JSON.parse(await readFile(join(store, 'state.json'), 'utf8')) as { active: string };
      expect(state.active, m.what).toBe(act.status === 0 ? 'v1' : 'v2');
    }
  });

  it('a lease or the lock mutated: prune goes on or refuses in words (a lease it cannot read: exit 2, nothing deleted), activate goes on, versions intact, a live lease still protects', async () => {
    const dead = spawn(process.execPath, ['-e', '0']);
    await new Promise((r) => dead.on('exit', r));
    const lease = JSON.stringify({ pid: process.pid, start: startMarker(process.pid), version: 'v3', startedAt: new Date().toISOString() });
    for (const m of some(lease, 3, 0x1ea5e)) {
      const store = await copyStore();
      await mkdir(join(store, 'leases'));
      await writeFile(join(store, 'leases', `${process.pid}.json`), m.bytes);
      const prune = airlock(['prune', '--keep', '0', '--store', store]);
      const left = await check(store, prune, `prune, lease ${m.what}`);
      expect([0, 2], `${m.what}: ${prune.stderr}`).toContain(prune.status);
      if (prune.status === 2) {
        expect(prune.stderr, m.what).toMatch(/so no one can tell which version it keeps; .*\[AIRLOCK_STORE_PATH\]/s);
        expect(left, m.what).toEqual(VERSIONS);
      }
      expect(left, m.what).toEqual(expect.arrayContaining(['v1', 'v2']));
      if (m.bytes.toString() === lease) expect(left).toContain('v3');
    }
    const lock = JSON.stringify({ pid: dead.pid, start: '12345', nonce: 'abc', since: new Date().toISOString() });
    for (const m of some(lock, 3, 0x10c4)) {
      const store = await copyStore();
      await writeFile(join(store, 'lock'), m.bytes);
      const act = airlock(['activate', 'v3', '--store', store], { timeoutMs: 20_000 });
      await check(store, act, `activate, lock ${m.what}`);
      expect(act.status, `${m.what}: ${act.stderr}`).toBe(0);
      expect(await exists(join(store, 'lock')), m.what).toBe(false); // taken over, then released
    }
  });
});
