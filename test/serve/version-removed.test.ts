import { afterEach, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { cleanup, get, setActive, tempRoot, writeVersion } from './helpers.js';
import { until } from '../helpers/wait.js';

let srv: AirlockServer | null = null;
let root: string | null = null;
afterEach(async () => {
  await srv?.close(0);
  srv = null;
  if (root) await cleanup(root);
  root = null;
});

describe('a store whose served version is removed and put back', () => {
  it('answers 503 while the version is gone, and serves again once it is back, with no switch and no restart', async () => {
    root = await tempRoot('airlock-removed-');
    const store = join(root, 'store');
    await writeVersion(store, 'v1', { 'index.html': '<!doctype html><title>home</title><p>home', 'notes.txt': 'notes v1', 'other.txt': 'other v1' });
    await setActive(store, 'v1');
    srv = await createAirlockServer({ store, lease: false, log: () => {}, pollMs: 50 });
    const base = (await srv.listen()).replace(/\/$/, '');
    expect((await get(base + '/notes.txt')).status).toBe(200);
    await rename(join(store, 'versions', 'v1'), join(root, 'v1-moved')); // an operator's mistake, or a restore in progress
    const gone = await get(base + '/other.txt'); // not read yet (notes.txt is held in memory)
    expect([gone.status, gone.headers['retry-after']]).toEqual([503, '5']);
    expect((await get(base + '/')).status).toBe(503); // a page too
    await rename(join(root, 'v1-moved'), join(store, 'versions', 'v1')); // put back
    await until(async () => (await get(base + '/other.txt')).status === 200, { timeoutMs: 10_000 });
    expect((await get(base + '/other.txt')).body.toString()).toBe('other v1');
    expect((await get(base + '/')).status).toBe(200);
  });

  it('cache poisoning: a file of another size than the manifest says is refused, and its bytes are never served later', async () => {
    root = await tempRoot('airlock-resized-');
    const store = join(root, 'store');
    await writeVersion(store, 'v1', { 'index.html': '<!doctype html><title>home</title><p>home', 'notes.txt': 'notes v1' });
    await setActive(store, 'v1');
    srv = await createAirlockServer({ store, lease: false, log: () => {}, pollMs: 50 });
    const base = (await srv.listen()).replace(/\/$/, '');
    const file = join(store, 'versions', 'v1', 'site', 'notes.txt');
    await writeFile(file, 'planted by someone else, longer'); // another size than the manifest's
    expect((await get(base + '/notes.txt')).status).toBe(503); // the store is damaged: said, never served
    await writeFile(file, 'notes v1'); // repaired
    const again = await get(base + '/notes.txt');
    expect([again.status, again.body.toString()]).toEqual([200, 'notes v1']);
  });

  it('a site file edited in the store to other bytes of the same size: refused against the package digest (503), never removed', async () => {
    root = await tempRoot('airlock-edited-');
    const store = join(root, 'store');
    await writeVersion(store, 'v1', { 'index.html': '<!doctype html><title>home</title><p>home', 'notes.txt': 'notes v1' });
    await setActive(store, 'v1');
    srv = await createAirlockServer({ store, lease: false, log: () => {}, pollMs: 50 });
    const base = (await srv.listen()).replace(/\/$/, '');
    const file = join(store, 'versions', 'v1', 'site', 'notes.txt');
    await writeFile(file, 'NOTES V1'); // same size, other bytes
    const edited = await get(base + '/notes.txt');
    expect([edited.status, edited.body.toString()]).toEqual([503, expect.stringContaining('differs from its package')]);
    expect(await readFile(file, 'utf8')).toBe('NOTES V1'); // the store's file: left for its owner to see
    await writeFile(file, 'notes v1');
    expect((await get(base + '/notes.txt')).body.toString()).toBe('notes v1');
  });
});
