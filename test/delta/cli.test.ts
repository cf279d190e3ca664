import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { airlock } from '../helpers/bin.js';
import { existsSync } from 'node:fs';
import { storedPackage } from '../../src/store/index.js';
import { buildPackage, makeKey, makeTempDir, treeDigest, type TestKey } from '../store/helpers.js';

let dir: string;
let key: TestKey;
const keyPath = () => join(dir, 'signer.key');

function site(tag: string, pages = 40, extra: Record<string, string> = {}): Record<string, string> {
  const nav = Array.from({ length: pages }, (_, i) => `<a href="/p${i}">Page ${i}</a>`).join('\n');
  const files: Record<string, string> = { 'index.html': `<html><nav>${nav}</nav><h1>home ${tag}</h1></html>` };
  for (let i = 0; i < pages; i++)
    files[`docs/p${i}.html`] =
      `<html><head><title>${i}</title></head><nav>${nav}</nav><main>${'Lorem ipsum dolor sit amet. '.repeat(40)} page ${i}</main></html>`;
  files['assets/app.0a1b2c3d.js'] = 'console.log("app");'.repeat(50);
  return { ...files, ...extra };
}

beforeAll(async () => {
  dir = await makeTempDir('airlock-delta-');
  key = await makeKey(dir);
  const { writeFile } = await import('node:fs/promises');
  await writeFile(keyPath(), key.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const importInto = (pkg: string, store: string, ...more: string[]) =>
  airlock(['import', pkg, '--store', store, '--trust', key.pubPath, '--no-precompress', ...more], { timeoutMs: 60_000 });

describe('airlock delta → import', () => {
  it('a delta carries one edited page and nav changes; import rebuilds the exact canonical full package', async () => {
    const v1 = await buildPackage(dir, { version: 'v1', files: site('one'), key });
    const f2 = site('one', 41);
    f2['docs/p3.html'] = f2['docs/p3.html']!.replace('page 3', 'page three, edited');
    const v2 = await buildPackage(dir, { version: 'v2', files: f2, key });
    const out = join(dir, 'out');
    const d = airlock(['delta', v1, v2, '--out', out, '--sign-key', keyPath(), '--json']);
    expect(d.stderr).toBe('');
    expect(d.status).toBe(0);
    const sum = JSON.parse(d.stdout) as { delta: string; full: string; deltaBytes: number; fullBytes: number; ops: Record<string, number> };
    expect(sum.ops.patch).toBeGreaterThan(30);
    expect(sum.deltaBytes).toBeLessThan(sum.fullBytes / 5);
    const store = join(dir, 'store-a');
    expect(importInto(v1, store).status).toBe(0);
    const r = importInto(sum.delta, store, '--json');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ version: 'v2', status: 'imported' });
    // No second copy of the site: the package is built when first asked for (the mirror), and it
    // is the canonical full package airlock delta wrote beside the delta, byte for byte.
    expect(existsSync(join(store, 'versions/v2/package.airlock'))).toBe(false);
    const meta = JSON.parse(await readFile(join(store, 'versions/v2/version.json'), 'utf8')) as { packageSha256: string | null };
    expect(meta.packageSha256).toBeNull();
    const built = await storedPackage(store, 'v2');
    const stored = await readFile(built.path);
    expect(stored.equals(await readFile(sum.full))).toBe(true);
    expect(built.sha256).toBe(createHash('sha256').update(stored).digest('hex')); // hashed after the head was written last
    expect(await storedPackage(store, 'v2')).toEqual(built); // found there the second time
    expect(airlock(['verify', built.path, '--trust', key.pubPath]).status).toBe(0);
    expect(await readFile(join(store, 'versions/v2/site/docs/p3.html'), 'utf8')).toContain('page three, edited');
    // the same delta again: a no-op
    const before = await treeDigest(store);
    const again = importInto(sum.delta, store, '--json');
    expect(again.status).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'unchanged' });
    expect(await treeDigest(store)).toBe(before);
    // the loop back: list --json and the receipt name each version's manifest digest, the one the delta names
    const listed = JSON.parse(airlock(['list', '--store', store, '--json']).stdout) as {
      versions: { version: string; manifestSha256: string; fromDelta: unknown }[];
    };
    const v1Digest = createHash('sha256')
      .update(await readFile(join(store, 'versions/v1/airlock.json')))
      .digest('hex');
    expect(listed.versions.find((v) => v.version === 'v1')).toMatchObject({ manifestSha256: v1Digest, fromDelta: null });
    expect(listed.versions.find((v) => v.version === 'v2')).toMatchObject({ fromDelta: { base: 'v1', baseManifestSha256: v1Digest } });
    const receiptPath = join(dir, 'receipt.json');
    expect(airlock(['receipt', '--store', store, '--out', receiptPath]).status).toBe(0);
    const receipt = JSON.parse(await readFile(receiptPath, 'utf8')) as { format: string; versions: { version: string; manifestSha256: string }[] };
    expect(receipt.format).toBe('airlock-receipt/1');
    expect(receipt.versions.map((v) => [v.version, v.manifestSha256]).sort()).toEqual([
      ['v1', v1Digest],
      [
        'v2',
        createHash('sha256')
          .update(await readFile(join(store, 'versions/v2/airlock.json')))
          .digest('hex'),
      ],
    ]);
    expect(await treeDigest(store)).toBe(before);
    expect(airlock(['receipt', '--store', join(dir, 'nope'), '--out', receiptPath]).status).toBe(2);
  });

  it('a truncated or garbled package on either side: the refusal names which file (two are given)', async () => {
    const { copyFile, truncate, writeFile } = await import('node:fs/promises');
    const v1 = await buildPackage(dir, { version: 'v1b', files: site('b'), key });
    const v2 = await buildPackage(dir, { version: 'v2b', files: site('b', 41), key });
    const cut = join(dir, 'cut-new.airlock');
    await copyFile(v2, cut);
    await truncate(cut, 1000);
    const zeros = join(dir, 'zeros-old.airlock');
    await writeFile(zeros, Buffer.alloc(4096));
    for (const [old, next, named] of [
      [v1, cut, cut],
      [zeros, v2, zeros],
    ]) {
      const r = airlock(['delta', old!, next!, '--out', join(dir, 'never')]);
      expect(r.status, r.stderr).toBe(4);
      expect(r.stderr).toContain(`package ${named}`);
      expect(existsSync(join(dir, 'never'))).toBe(false);
    }
  });
});
