import { describe, it, expect } from 'vitest';
import { join } from 'node:path';
import { createAirlockServer } from '../../src/serve/index.js';
import { serveCaseAfterEach, get, setActive, tempRoot, writeVersion } from './helpers.js';

/** Skew protection: a previous (or the coming) version's non-HTML files answer while the active one lacks them. */
const t = serveCaseAfterEach();

const page = (v: string) => `<!doctype html><h1>${v}</h1><script src="/assets/app.${v}.js"></script>`;
async function store() {
  t.root = await tempRoot('airlock-skew-');
  const s = join(t.root, 'store');
  await writeVersion(s, 'v1', {
    'index.html': page('v1'),
    'old.html': 'only in v1',
    'assets/app.v1.js': 'v1 chunk',
    'shared.css': 'v1 css',
    'data/v1.json': '{"v":1}',
  });
  await writeVersion(s, 'v2', { 'index.html': page('v2'), 'assets/app.v2.js': 'v2 chunk', 'shared.css': 'v2 css' });
  await setActive(s, 'v1');
  return s;
}

async function switchTo(s: string, label: string) {
  await setActive(s, label);
  await t.srv!.recheck();
  expect(t.srv!.current().version).toBe(label);
}

describe('skew protection', () => {
  it('after a switch: the old chunks answer 200 from the old version; pages, 404s and shared names come from the active one', async () => {
    const s = await store();
    t.srv = await createAirlockServer({ store: s, lease: false, log: () => {} });
    const base = (await t.srv.listen(0)).slice(0, -1);
    await switchTo(s, 'v2');
    const old = await get(base + '/assets/app.v1.js');
    expect(old.status).toBe(200);
    expect(old.body.toString()).toBe('v1 chunk');
    expect(old.headers['x-airlock-version']).toBe('v1');
    expect((await get(base + '/data/v1.json')).status).toBe(200);
    const now = await get(base + '/assets/app.v2.js');
    expect([now.status, now.headers['x-airlock-version']]).toEqual([200, 'v2']);
    expect((await get(base + '/shared.css')).body.toString()).toBe('v2 css');
    // HTML never from another version: a page only v1 had is a 404 now, in every URL form.
    for (const p of ['/old.html', '/old']) {
      const r = await get(base + p);
      expect(r.status, p).toBe(404);
      expect(r.headers['x-airlock-version']).toBe('v2');
    }
    expect((await get(base + '/')).body.toString()).toContain('<h1>v2</h1>');
    expect((await get(base + '/assets/never.js')).status).toBe(404);
  });

  it('the grace period ends: the old chunks are 404 again; grace 0 turns protection off', async () => {
    const s = await store();
    // A clock the test moves: just inside the grace the old chunk answers, just past it not.
    let now = 1_000_000;
    t.srv = await createAirlockServer({ store: s, lease: false, log: () => {}, skewGraceMs: 2000, clock: () => now });
    const base = (await t.srv.listen(0)).slice(0, -1);
    await switchTo(s, 'v2');
    now += 1999;
    expect((await get(base + '/assets/app.v1.js')).status).toBe(200);
    now += 2;
    expect((await get(base + '/assets/app.v1.js')).status).toBe(404);
    await t.srv.close();
    await setActive(s, 'v1');
    t.srv = await createAirlockServer({ store: s, lease: false, log: () => {}, skewGraceMs: 0 });
    const b2 = (await t.srv.listen(0)).slice(0, -1);
    await switchTo(s, 'v2');
    expect((await get(b2 + '/assets/app.v1.js')).status).toBe(404);
  });

  it('a version pre-loaded for the coming switch already answers its chunks (a page served by a replica that switched first)', async () => {
    const s = await store();
    t.srv = await createAirlockServer({ store: s, lease: false, log: () => {} });
    const base = (await t.srv.listen(0)).slice(0, -1);
    expect((await get(base + '/assets/app.v2.js')).status).toBe(404);
    await t.srv.preload('v2');
    const r = await get(base + '/assets/app.v2.js');
    expect([r.status, r.headers['x-airlock-version'], r.body.toString()]).toEqual([200, 'v2', 'v2 chunk']);
    expect((await get(base + '/')).body.toString()).toContain('<h1>v1</h1>');
    expect((await get(base + '/shared.css')).body.toString()).toBe('v1 css');
    await switchTo(s, 'v2');
    expect((await get(base + '/assets/app.v1.js')).status).toBe(200);
  });

  it('rolling back: the version switched away from keeps its chunks; the active one is never a fallback of itself', async () => {
    const s = await store();
    t.srv = await createAirlockServer({ store: s, lease: false, log: () => {} });
    const base = (await t.srv.listen(0)).slice(0, -1);
    await switchTo(s, 'v2');
    await switchTo(s, 'v1');
    const r = await get(base + '/assets/app.v2.js');
    expect([r.status, r.headers['x-airlock-version']]).toEqual([200, 'v2']);
    expect((await get(base + '/shared.css')).body.toString()).toBe('v1 css');
  });
});
