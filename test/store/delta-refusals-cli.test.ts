import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlock } from '../helpers/bin.js';
import { buildPackage, makeKey, makeTempDir, treeDigest, type TestKey } from './helpers.js';
import { auditCount, expectRefusalLogged } from './audit-expect.js';
import { craftDelta, relayout } from '../delta/craft.js';
import { readDelta } from '../../src/delta/index.js';
import { readPackage } from '../../src/package/index.js';
import { createHash, sign } from 'node:crypto';

/** Delta packages, bad input: every refused delta import exits 4, names what is wrong, and leaves the store byte-identical. */
let dir: string;
let key: TestKey;
let v1: string;
let v2: string;
let delta: string;
let full: string;
let pristine: string;
let n = 0;

function site(tag: string, pages = 30): Record<string, string> {
  const nav = Array.from({ length: pages }, (_, i) => `<a href="/p${i}">Page ${i}</a>`).join('\n');
  const files: Record<string, string> = { 'index.html': `<html><nav>${nav}</nav><h1>home ${tag}</h1></html>` };
  for (let i = 0; i < pages; i++)
    files[`docs/p${i}.html`] = `<html><nav>${nav}</nav><main>${'Lorem ipsum dolor sit amet. '.repeat(30)} page ${i} ${tag}</main></html>`;
  return files;
}
const keyFile = () => join(dir, 'signer.key');
const importInto = (pkg: string, store: string, ...more: string[]) =>
  airlock(['import', pkg, '--store', store, '--trust', key.pubPath, '--no-precompress', ...more], { timeoutMs: 60_000 });

beforeAll(async () => {
  dir = await makeTempDir('airlock-delta-refusals-');
  key = await makeKey(dir);
  await writeFile(keyFile(), key.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  v1 = await buildPackage(dir, { version: 'v1', files: site('a'), key });
  const f2 = site('a', 31);
  f2['docs/new.html'] = '<html>brand new page</html>';
  v2 = await buildPackage(dir, { version: 'v2', files: f2, key });
  const d = airlock(['delta', v1, v2, '--out', join(dir, 'out'), '--sign-key', keyFile(), '--json']);
  expect(d.status, d.stderr).toBe(0);
  ({ delta, full } = JSON.parse(d.stdout) as { delta: string; full: string });
  pristine = join(dir, 'pristine');
  expect(importInto(v1, pristine).status).toBe(0);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/**
 * craftDelta options that carry `bytes` inline as the target manifest, signed with the key, and
 * the delta's digest of it: the patch is made against the pristine store's v1 manifest (v1's file
 * is rebuilt with other content by the impostor test).
 */
async function inlineTarget(bytes: Buffer) {
  const baseBytes = await readFile(join(pristine, 'versions/v1/airlock.json'));
  return {
    key: key.priv,
    targetBytes: bytes,
    baseBytes,
    targetSig: sign(null, bytes, key.priv),
    edit: (m: { target: { manifestSha256: string } }) => {
      m.target.manifestSha256 = createHash('sha256').update(bytes).digest('hex');
    },
  };
}
async function storeWithV1(): Promise<{ store: string; before: string }> {
  const store = join(dir, `store-${++n}`);
  await cp(pristine, store, { recursive: true });
  return { store, before: await treeDigest(store) };
}
async function refused(pkg: string, code: string, ...more: string[]): Promise<string> {
  const { store, before } = await storeWithV1();
  const lines = await auditCount(store);
  const r = importInto(pkg, store, ...more);
  expect(r.stderr).toContain(`[${code}]`);
  expect(r.status).toBe(4);
  expect(await treeDigest(store)).toBe(before);
  await expectRefusalLogged(store, lines, code); // the audit log: the one change a refusal makes
  return r.stderr;
}
const crafted = (name: string) => join(dir, `crafted-${name}.delta.airlock`);

describe('delta import refusals (store unchanged)', () => {
  it('base missing: exit 4 naming the base label and the manifest digest it needs; a missing store is not created', async () => {
    const l = await readDelta(delta);
    const empty = join(dir, 'store-other');
    const v0 = await buildPackage(dir, { version: 'v0', files: site('zero'), key });
    expect(importInto(v0, empty).status).toBe(0);
    const before = await treeDigest(empty);
    const lines = await auditCount(empty);
    const r = importInto(delta, empty);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('[AIRLOCK_DELTA_BASE]');
    expect(r.stderr).toContain('version v1');
    expect(r.stderr).toContain(l.manifest.base.manifestSha256);
    expect(await treeDigest(empty)).toBe(before);
    expect(await expectRefusalLogged(empty, lines, 'AIRLOCK_DELTA_BASE')).toMatchObject({ domain: 'docs.example.com', version: 'v2' });
    const none = join(dir, 'no-store');
    expect(importInto(delta, none).status).toBe(4);
    await expect(readFile(join(none, 'state.json'))).rejects.toThrow();
  });

  it('base with the right label but other content: exit 4 AIRLOCK_DELTA_BASE', async () => {
    const other = join(dir, 'store-impostor');
    const v1b = await buildPackage(join(dir), { version: 'v1', files: site('impostor'), key });
    expect(importInto(v1b, other).status).toBe(0);
    const before = await treeDigest(other);
    const r = importInto(delta, other);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/needs version v1 with manifest sha256 [0-9a-f]{64}.*\[AIRLOCK_DELTA_BASE\]/s);
    expect(await treeDigest(other)).toBe(before);
  });

  it('a rebuilt file that does not match the target manifest (a copy from the wrong base file, delta signed by the trusted key): exit 4', async () => {
    const pkg = await craftDelta(delta, crafted('wrong-copy'), {
      key: key.priv,
      ops: (ops, blobs) => {
        const i = ops.findIndex((op) => op.path === 'docs/p3.html');
        const victim = ops[i]!;
        if (victim.kind !== 'copy') blobs.splice(ops.slice(0, i).filter((op) => op.kind !== 'copy').length, 1);
        ops[i] = { kind: 'copy', path: 'docs/p3.html', from: 'docs/p4.html' };
        return relayout(ops);
      },
    });
    expect(await refused(pkg, 'AIRLOCK_DIGEST_MISMATCH')).toMatch(
      /files rebuilt from this delta do not give the signed target manifest.*a copy, patch or whole file is wrong; the delta built docs\/new\.html, .*\(\d+ in all\)/s,
    );
  });

  it('the same wrong copy with the target manifest inline (exact digests): exit 4 naming the file rebuilt wrong', async () => {
    const bytes = (await readPackage(full)).manifestBytes;
    const pkg = await craftDelta(delta, crafted('wrong-copy-inline'), {
      ...(await inlineTarget(bytes)),
      ops: (ops, blobs) => {
        const i = ops.findIndex((op) => op.path === 'docs/p3.html');
        if (ops[i]!.kind !== 'copy') blobs.splice(ops.slice(0, i).filter((op) => op.kind !== 'copy').length, 1);
        ops[i] = { kind: 'copy', path: 'docs/p3.html', from: 'docs/p4.html' };
        return relayout(ops);
      },
    });
    expect(await refused(pkg, 'AIRLOCK_DIGEST_MISMATCH')).toMatch(
      /docs\/p3\.html was rebuilt with sha256 [0-9a-f]{64} but the target manifest says [0-9a-f]{64}/,
    );
  });

  it('a patch applied to another base file than it was made for: exit 4 AIRLOCK_DELTA_PATCH', async () => {
    const pkg = await craftDelta(delta, crafted('wrong-source'), {
      key: key.priv,
      ops: (ops) => ops.map((op) => (op.path === 'docs/p5.html' && op.kind === 'patch' ? { ...op, from: 'docs/p9.html' } : op)),
    });
    expect(await refused(pkg, 'AIRLOCK_DELTA_PATCH')).toContain('docs/p5.html');
  });

  it('a base whose site lost a file (damaged by hand): the patch reading it is refused by name; a base file read ahead and never used does not crash the import', async () => {
    // Base files are read ahead of their patches (up to 32): docs/p8.html, 30th in payload order,
    // is read (and fails) while the patch of docs/p0.html, 2nd, which names a base file the base
    // does not list, is refused first. The import must still exit 4 with p0's refusal, not die on
    // the read nobody took.
    const pkg = await craftDelta(delta, crafted('missing-source'), {
      key: key.priv,
      ops: (ops) => ops.map((op) => (op.path === 'docs/p0.html' && op.kind === 'patch' ? { ...op, from: 'docs/gone.html' } : op)),
    });
    for (const [victim, delta_, code, message] of [
      ['docs/p8.html', pkg, 'AIRLOCK_BAD_DELTA', 'the delta builds "docs/p0.html" from "docs/gone.html"'],
      ['docs/p7.html', delta, 'AIRLOCK_DELTA_PATCH', 'the patch for docs/p7.html'],
    ] as const) {
      const { store } = await storeWithV1();
      await rm(join(store, 'versions/v1/site', victim));
      const before = await treeDigest(store);
      const lines = await auditCount(store);
      const r = importInto(delta_, store);
      expect(r.stderr).toContain(`[${code}]`);
      expect(r.stderr).toContain(message);
      expect(r.stderr).not.toMatch(/\bENOENT\b|no such file or directory/); // the missing base file in words
      expect(r.status).toBe(4);
      expect(await treeDigest(store)).toBe(before);
      await expectRefusalLogged(store, lines, code);
    }
  });

  it('a delta that names a file twice: exit 4 AIRLOCK_BAD_DELTA', async () => {
    const pkg = await craftDelta(delta, crafted('twice'), { key: key.priv, ops: (ops) => [...ops, { kind: 'copy', path: ops[0]!.path, from: 'index.html' }] });
    expect(await refused(pkg, 'AIRLOCK_BAD_DELTA')).toContain('twice');
  });

  it('zip-slip in a delta: an op writing ../../evil.html, or reading ../../../etc/passwd, is refused before a byte is written', async () => {
    const out = await craftDelta(delta, crafted('slip-write'), {
      key: key.priv,
      ops: (ops) => [...ops, { kind: 'copy', path: '../../evil.html', from: 'index.html' }],
    });
    expect(await refused(out, 'AIRLOCK_BAD_DELTA')).toContain('../../evil.html');
    const inp = await craftDelta(delta, crafted('slip-read'), {
      key: key.priv,
      ops: (ops) => ops.map((op) => (op.path === 'index.html' && op.kind === 'patch' ? { ...op, from: '../../../etc/passwd' } : op)),
    });
    expect(await refused(inp, 'AIRLOCK_BAD_DELTA')).toContain('etc/passwd');
  });

  it('zip-slip in a re-signed target manifest (a ../ path) is refused as a bad manifest', async () => {
    const t = JSON.parse((await readPackage(full)).manifestBytes.toString()) as { files: { path: string }[] };
    t.files[0]!.path = '../outside.html';
    const pkg = await craftDelta(delta, crafted('slip-target'), await inlineTarget(Buffer.from(JSON.stringify(t))));
    await refused(pkg, 'AIRLOCK_BAD_MANIFEST');
  });

  it('a target manifest without its signature is refused (exit 4 AIRLOCK_UNSIGNED) even when the delta itself is signed', async () => {
    const pkg = await craftDelta(delta, crafted('unsigned-target'), { key: key.priv, targetSig: null });
    await refused(pkg, 'AIRLOCK_UNSIGNED');
  });

  it('an unsigned delta manifest is refused without --allow-unsigned', async () => {
    const pkg = await craftDelta(delta, crafted('unsigned-delta'), {});
    await refused(pkg, 'AIRLOCK_UNSIGNED');
  });

  it('a delta chain: a delta made against the original v2 package does not apply to a v2 imported from a delta; one made against the .full package does', async () => {
    const f3 = site('a', 31);
    f3['docs/new.html'] = '<html>brand new page, v3</html>';
    const v3 = await buildPackage(dir, { version: 'v3', files: f3, key });
    const wrong = airlock(['delta', v2, v3, '--out', join(dir, 'chain-wrong'), '--sign-key', keyFile(), '--json']);
    const right = airlock(['delta', full, v3, '--out', join(dir, 'chain-right'), '--sign-key', keyFile(), '--json']);
    expect(wrong.status).toBe(0);
    expect(right.status).toBe(0);
    const { store, before } = await storeWithV1();
    expect(importInto(delta, store).status).toBe(0);
    const mid = await treeDigest(store);
    expect(before).not.toBe(mid);
    const r = importInto((JSON.parse(wrong.stdout) as { delta: string }).delta, store);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/needs version v2 with manifest sha256.*\[AIRLOCK_DELTA_BASE\]/s);
    expect(await treeDigest(store)).toBe(mid);
    const ok = importInto((JSON.parse(right.stdout) as { delta: string }).delta, store, '--json');
    expect(ok.status, ok.stderr).toBe(0);
    expect(await readFile(join(store, 'versions/v3/site/docs/new.html'), 'utf8')).toContain('v3');
  });
});
