import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock } from '../helpers/bin.js';
import { makePackage } from '../helpers/make-package.js';
import { jsonMutants, mutants } from '../helpers/mutate.js';
import { siteFiles } from '../helpers/evil-archives.js';
import { loadPrivateKey } from '../../src/package/keys.js';
import { treeDigest } from '../store/helpers.js';
import { assemble, membersOf, type Member } from '../package/craft.js';

/**
 * A sample of the package fuzz (test/package/fuzz.test.ts) through the built binary,
 * where printing is part of the path (inspect --json used to overflow the stack): every command
 * exits 0 or 4, never 1 / AIRLOCK_INTERNAL, prints no escape sequence, and the store is unchanged.
 */
let dir: string;
let key: string;
let good: string;
let store: string;
let members: Member[];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-pkg-fuzz-cli-'));
  key = join(dir, 'signer');
  expect(airlock(['keygen', '--out', key]).status).toBe(0);
  const site = join(dir, 'site');
  for (const f of siteFiles()) {
    await mkdir(join(site, f.name, '..'), { recursive: true });
    await writeFile(join(site, f.name), f.data);
  }
  good = (await makePackage({ outDir: join(dir, 'good'), siteDir: site, signKey: `${key}.key` })).pkgPath;
  members = await membersOf(good);
  store = join(dir, 'store');
  expect(airlock(['import', good, '--store', store, '--trust', `${key}.pub`, '--no-precompress']).status).toBe(0);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function throughBinary(what: string, p: string): Promise<void> {
  const before = await treeDigest(store);
  const runs = [
    airlock(['inspect', p, '--json']),
    airlock(['verify', p, '--trust', `${key}.pub`]),
    airlock(['import', p, '--store', store, '--trust', `${key}.pub`, '--no-precompress']),
  ];
  for (const r of runs) {
    expect([0, 4], `${what}: exit ${r.status}: ${r.stderr}`).toContain(r.status);
    expect(r.stderr, what).not.toContain('AIRLOCK_INTERNAL');
    expect(r.stdout + r.stderr, what).not.toContain('\u001b');
  }
  // Every mutant keeps the label v1 or is refused, so the store must not change either way.
  expect(await treeDigest(store), `${what}: the store changed`).toBe(before);
}

describe('package fuzz sample through the built binary', () => {
  it('byte mutants of a signed package', async () => {
    const bytes = await readFile(good);
    for (const m of mutants(bytes, 6, 0xb1a5)) {
      const p = join(dir, `byte-${m.index}.airlock`);
      await writeFile(p, m.bytes);
      await throughBinary(`byte mutant #${m.index} (${m.mutation} at ${m.at})`, p);
    }
  }, 40_000);

  it('manifest mutants re-signed with the trusted key, one of each kind (deep nesting, escapes, huge numbers...)', async () => {
    const signer = await loadPrivateKey(`${key}.key`);
    const manifest = JSON.parse(members[0]!.data.toString()) as Record<string, unknown>;
    const seen = new Set<string>();
    const picked: Array<{ text: string; what: string }> = [];
    for (const m of jsonMutants(manifest, 400, 0x5a17)) {
      const kind = m.what.split(' → ')[1]!;
      // Skip changes of the version label: a valid new label is a legitimate new version, not a store change to refuse.
      if (seen.has(kind) || m.what.startsWith('version ') || picked.length >= 6) continue;
      if (!['deep', 'control characters', 'number', 'string', 'removed', 'object'].includes(kind)) continue;
      seen.add(kind);
      // JSON.stringify cannot write jsonMutants' deep value here (it overflows too): nest 20,000 levels
      // as text under an unknown field, which passes through to inspect --json (the original crash).
      const text = kind === 'deep' ? `${JSON.stringify(manifest).slice(0, -1)},"x":${'['.repeat(20_000)}${']'.repeat(20_000)}}` : JSON.stringify(m.value);
      picked.push({ text, what: `manifest mutant #${m.index} (${m.what})` });
    }
    expect(picked.length).toBe(6);
    for (const [i, m] of picked.entries()) {
      const data = Buffer.from(m.text);
      const p = join(dir, `json-${i}.airlock`);
      await assemble(p, [{ name: 'airlock.json', data }, { name: 'airlock.json.sig', data: sign(null, data, signer) }, members[2]!]);
      await throughBinary(m.what, p);
    }
  }, 40_000);
});
