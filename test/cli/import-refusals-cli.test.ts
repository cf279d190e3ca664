/**
 * Store guarantees and archive safety: a refused import leaves the store exactly as
 * it was, in every failure mode, through the built binary (exit code, message naming the thing,
 * store tree digest before/after). Writes still in flight when the refusal came used
 * to make rmdir fail with ENOTEMPTY (exit 1) and leave staging/…/site/… behind.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { airlock } from '../helpers/bin.js';
import { makePackage } from '../helpers/make-package.js';
import { readPackage } from '../../src/package/index.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from '../store/helpers.js';

const ENOSPC = fileURLToPath(new URL('../store/fixtures/enospc.mjs', import.meta.url));

let dir: string;
let key: TestKey;
let v1: string;
/** Enough files that a pool of writes is in flight when a refusal comes late. */
function manyFiles(n: number, withIndex = true): Record<string, string> {
  const files: Record<string, string> = withIndex ? { 'index.html': '<h1>home</h1>' } : {};
  for (let i = 0; i < n; i++) files[`pages/p${i}.html`] = `<p>${i}</p>` + 'x'.repeat(200 + i);
  return files;
}
beforeAll(async () => {
  dir = await makeTempDir('airlock-refusals-');
  key = await makeKey(dir);
  v1 = await buildPackage(dir, { version: 'v1', files: sampleSite('one'), key });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
/** A store holding v1 (active), and its digest. */
async function storeWithV1(): Promise<{ store: string; before: string }> {
  const store = join(dir, `store-${++n}`);
  expect(airlock(['import', v1, '--store', store, '--trust', key.pubPath, '--activate', '--no-precompress']).status).toBe(0);
  return { store, before: await treeDigest(store) };
}
const importInto = (pkg: string, store: string, env: NodeJS.ProcessEnv = {}) =>
  airlock(['import', pkg, '--store', store, '--trust', key.pubPath, '--no-precompress'], { env, timeoutMs: 60_000 });
const absent = async (p: string) =>
  access(p).then(
    () => false,
    () => true,
  );

describe('a refused import leaves the store byte-identical', () => {
  it('an export without index.html: exit 4 AIRLOCK_NO_INDEX before anything is written (a new store is not even created)', async () => {
    const pkg = await buildPackage(dir, { version: 'noindex', files: manyFiles(300, false), key });
    const { store, before } = await storeWithV1();
    const r = importInto(pkg, store);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/index\.html.*\[AIRLOCK_NO_INDEX\]/);
    expect(r.stderr).not.toContain('extracting');
    expect(await treeDigest(store)).toBe(before);
    const fresh = join(dir, 'fresh-noindex', 'deeper', 'store');
    expect(importInto(pkg, fresh).status).toBe(4);
    expect(await absent(join(dir, 'fresh-noindex'))).toBe(true);
  });

  it('a manifest promising an index.html the archive lacks: refused after the last file (exit 4 AIRLOCK_NO_INDEX), writes drained, nothing left', async () => {
    const pkg = await buildPackage(dir, {
      version: 'lateindex',
      files: { ...manyFiles(400, false), 'robots.txt': 'User-agent: *\n' },
      key,
      tamper: (m) => m.files.unshift({ path: 'index.html', size: 13, sha256: 'a'.repeat(64) }),
    });
    const { store, before } = await storeWithV1();
    const r = importInto(pkg, store);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('extracting');
    expect(r.stderr).toMatch(/"index\.html": the site has no index\.html at its root \[AIRLOCK_NO_INDEX\]/);
    expect(r.stderr).not.toContain('ENOTEMPTY');
    expect(await treeDigest(store)).toBe(before);
    const fresh = join(dir, 'fresh-lateindex');
    expect(importInto(pkg, fresh).status).toBe(4);
    expect(await absent(fresh)).toBe(true); // S/versions/ used to stay behind
  });

  it("an archive whose digest is not the signed manifest's: exit 4 AIRLOCK_ARCHIVE_DIGEST naming the archive, before any site file", async () => {
    const pkg = await buildPackage(dir, {
      version: 'archdigest',
      files: manyFiles(50),
      key,
      tamper: (m) => {
        m.archive.sha256 = 'b'.repeat(64);
      },
    });
    const { store, before } = await storeWithV1();
    const r = importInto(pkg, store);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/bundle\.tar\.gz has sha256 [0-9a-f]{64} but the manifest says b{64} \[AIRLOCK_ARCHIVE_DIGEST\]/);
    expect(r.stderr).not.toContain('extracting');
    expect(await treeDigest(store)).toBe(before);
  });

  it('a file digest that does not match (the last file of the archive): exit 4 AIRLOCK_DIGEST_MISMATCH naming it', async () => {
    const last = 'pages/p99.html'; // tar order is byte order: pages/p0 … pages/p99
    const pkg = await buildPackage(dir, {
      version: 'filedigest',
      files: manyFiles(400),
      key,
      tamper: (m) => {
        m.files.find((f) => f.path === last)!.sha256 = 'c'.repeat(64);
      },
    });
    const { store, before } = await storeWithV1();
    const r = importInto(pkg, store);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain(`${last} has sha256`);
    expect(r.stderr).toContain('[AIRLOCK_DIGEST_MISMATCH]');
    expect(await treeDigest(store)).toBe(before);
  });

  it('an archive entry the manifest does not list: refused at once (exit 4 AIRLOCK_EXTRA_FILE naming it), not after the last file', async () => {
    const pkg = await buildPackage(dir, {
      version: 'extra',
      files: manyFiles(400),
      key,
      tamper: (m) => {
        m.files = m.files.filter((f) => f.path !== 'pages/p1.html');
      },
    });
    const { store, before } = await storeWithV1();
    const r = importInto(pkg, store);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/pages\/p1\.html is in bundle\.tar\.gz but not listed in the manifest \[AIRLOCK_EXTRA_FILE\]/);
    expect(await treeDigest(store)).toBe(before);
  });

  it('disk full (ENOSPC during the copy, the extraction, the metadata): exit 1 AIRLOCK_NO_SPACE naming the store, nothing left', async () => {
    const files = manyFiles(400);
    const pkg = await buildPackage(dir, { version: 'full', files, key });
    const pkgSize = (await stat(pkg)).size;
    const siteBytes = Object.values(files).reduce((s, b) => s + Buffer.byteLength(b), 0);
    const cases = [
      { at: 'copy', budget: Math.floor(pkgSize / 2) },
      { at: 'extraction', budget: pkgSize + Math.floor(siteBytes / 2) },
      { at: 'metadata', budget: pkgSize + siteBytes + 10 }, // airlock.json no longer fits
    ];
    for (const c of cases) {
      const { store, before } = await storeWithV1();
      const r = importInto(pkg, store, { NODE_OPTIONS: `--import=${ENOSPC}`, AIRLOCK_TEST_ENOSPC_AFTER: String(c.budget), AIRLOCK_TEST_ENOSPC_UNDER: store });
      expect(r.status, `${c.at}: ${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(`no space left in store ${store} while importing version full`);
      expect(r.stderr).toContain('[AIRLOCK_NO_SPACE]');
      if (c.at === 'copy') expect(r.stderr).not.toContain('extracting');
      else expect(r.stderr).toContain('extracting');
      expect(await treeDigest(store), c.at).toBe(before);
    }
    // Into a store that did not exist: nothing is left, not even the folder.
    const fresh = join(dir, 'fresh-full');
    const r = importInto(pkg, fresh, {
      NODE_OPTIONS: `--import=${ENOSPC}`,
      AIRLOCK_TEST_ENOSPC_AFTER: String(pkgSize + 1000),
      AIRLOCK_TEST_ENOSPC_UNDER: fresh,
    });
    expect(r.status).toBe(1);
    expect(await absent(fresh)).toBe(true);
  });

  it('a package that refuses is refused the same way into a store that did not exist: no store folder, no parents left', async () => {
    const unsigned = await buildPackage(dir, { version: 'unsigned', files: sampleSite('u'), name: 'unsigned.airlock' });
    const fresh = join(dir, 'fresh-unsigned', 'a', 'b');
    const r = airlock(['import', unsigned, '--store', fresh]);
    expect(r.status).toBe(4);
    expect(await absent(join(dir, 'fresh-unsigned'))).toBe(true);
    expect((await readdir(dir)).filter((e) => e.startsWith('fresh-'))).not.toContain('fresh-unsigned');
  });
});

describe('re-importing a version already in the store', () => {
  it('a corrupted copy of the same package is refused (exit 4, as verify says), not answered "unchanged"', async () => {
    const { store, before } = await storeWithV1();
    const layout = await readPackage(v1);
    const corrupt = Buffer.from(await readFile(v1));
    corrupt[layout.archive.offset + Math.floor(layout.archive.size / 2)]! ^= 0xff; // one bit inside the archive member
    const copy = join(dir, 'v1-corrupt.airlock');
    await writeFile(copy, corrupt);
    const verify = airlock(['verify', copy, '--trust', key.pubPath]);
    expect(verify.status).toBe(4);
    const r = importInto(copy, store);
    expect(r.status).toBe(4);
    expect(r.stdout).not.toContain('unchanged');
    expect(r.stderr).toMatch(/bundle\.tar\.gz has sha256 [0-9a-f]{64} but the manifest says [0-9a-f]{64} \[AIRLOCK_ARCHIVE_DIGEST\]/);
    expect(await treeDigest(store)).toBe(before);
    // The intact package is still answered "unchanged" (exit 0), store untouched.
    const again = importInto(v1, store);
    expect(again.status).toBe(0);
    expect(again.stdout).toContain('unchanged');
    expect(await treeDigest(store)).toBe(before);
  });

  it('a re-signed package whose manifest lists other digests for the same archive bytes is refused (exit 4) naming the file', async () => {
    const out = join(dir, 'same-archive');
    const good = await makePackage({ outDir: out, version: 'm1', signKey: key.priv, name: 'good.airlock' });
    const store = join(dir, `store-${++n}`);
    expect(importInto(good.pkgPath, store).status).toBe(0);
    const before = await treeDigest(store);
    const bad = await makePackage({
      outDir: out,
      version: 'm1',
      signKey: key.priv,
      name: 'bad.airlock',
      mutate: (m) => {
        m.files.find((f) => f.path === 'robots.txt')!.sha256 = 'd'.repeat(64);
      },
    });
    expect(bad.manifest.archive.sha256).toBe(good.manifest.archive.sha256); // deterministic archive: same bytes
    const r = importInto(bad.pkgPath, store);
    expect(r.status).toBe(4);
    expect(r.stderr).toMatch(/robots\.txt has sha256 [0-9a-f]{64} but the manifest says d{64} \[AIRLOCK_DIGEST_MISMATCH\]/);
    expect(airlock(['verify', bad.pkgPath, '--trust', key.pubPath]).status).toBe(4);
    expect(await treeDigest(store)).toBe(before);
  });
});
