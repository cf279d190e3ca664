import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AirlockError } from '../../src/errors.js';
import { parseManifest, verifyPackage, writePackage, type Manifest, type VendorRecord } from '../../src/package/index.js';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { jsonMutants, mutants } from '../helpers/mutate.js';
import { siteFiles } from '../helpers/evil-archives.js';
import { treeDigest } from '../store/helpers.js';
import { assemble, membersOf, type Member } from './craft.js';

/**
 * Vendoring: the manifest's optional `vendor` field is bounded and fails closed; a package with it
 * verifies like any other; every mutant of it (re-signed with the trusted key, so the checks after
 * the signature are what is tested) either verifies and imports, or is refused with exit 4 and
 * the store unchanged. Bounded and seeded.
 */
let dir: string;
let store: string;
let base: Member[];
let manifest: Manifest;
let files: Map<string, Buffer>;
const { privateKey, publicKey } = generateKeyPairSync('ed25519');
const bundle = (): Member => base.find((m) => m.name.startsWith('bundle.'))!;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function record(bytes: Buffer, ext: string, url: string, kind: VendorRecord['kind'] = 'fonts'): VendorRecord {
  return { path: `vendor/${sha(bytes)}.${ext}`, size: bytes.length, sha256: sha(bytes), kind, urls: [url] };
}

async function pkgWith(name: string, m: unknown, vendorMembers: Member[]): Promise<string> {
  const data = Buffer.from(typeof m === 'string' ? m : JSON.stringify(m));
  const p = join(dir, name);
  await assemble(p, [{ name: 'airlock.json', data }, { name: 'airlock.json.sig', data: sign(null, data, privateKey) }, bundle(), ...vendorMembers]);
  return p;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-vendor-manifest-'));
  const site = join(dir, 'site');
  for (const f of siteFiles()) {
    await mkdir(join(site, f.name, '..'), { recursive: true });
    await writeFile(join(site, f.name), f.data);
  }
  const made = await makePackage({ outDir: join(dir, 'plain'), siteDir: site });
  base = await membersOf(made.pkgPath);
  const font = Buffer.from('wOF2 a font, as far as this test cares');
  const css = Buffer.from(`@font-face{font-family:X;src:url("${sha(font)}.woff2")}`);
  const v = [record(font, 'woff2', 'https://fonts.gstatic.com/s/x/v1/x.woff2'), record(css, 'css', 'https://fonts.googleapis.com/css2?family=X')];
  files = new Map([
    [v[0]!.path, font],
    [v[1]!.path, css],
  ]);
  manifest = { ...made.manifest, vendor: v };
  await writeFile(join(dir, 'bundle.tar.gz'), bundle().data);
  store = join(dir, 'store');
  await importPackage(made.pkgPath, { store, trust: [publicKey], allowUnsigned: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const members = () => manifest.vendor!.map((r) => ({ name: r.path, data: files.get(r.path)! }));

describe('the vendor field', () => {
  it('writePackage writes the members, and verify checks them; an old package without the field is unchanged and valid', async () => {
    const out = join(dir, 'written.airlock');
    const archive = join(dir, 'bundle.tar.gz');
    await writePackage({ outPath: out, manifest, archivePath: archive, signKey: privateKey, vendorBytes: files });
    expect((await membersOf(out)).map((m) => m.name)).toEqual(['airlock.json', 'airlock.json.sig', 'bundle.tar.gz', ...manifest.vendor!.map((r) => r.path)]);
    const r = await verifyPackage(out, { trust: [publicKey] });
    expect(r.manifest.vendor).toEqual(manifest.vendor);
    const { vendor: _drop, ...old } = manifest;
    expect(parseManifest(Buffer.from(JSON.stringify(old)))).not.toHaveProperty('vendor');
  });

  it('writePackage refuses to write vendored bytes that do not match their record', async () => {
    const archive = join(dir, 'bundle.tar.gz');
    const wrong = new Map(files);
    wrong.set(manifest.vendor![0]!.path, Buffer.from('not the font'));
    await expect(writePackage({ outPath: join(dir, 'never.airlock'), manifest, archivePath: archive, vendorBytes: wrong })).rejects.toThrow(
      /does not match its manifest record/,
    );
  });

  it('schema bounds: escaping or foreign paths, a path not naming its digest, http URLs, credentials, duplicates, too many, too big', () => {
    const bad: Array<[string, (v: VendorRecord[]) => unknown]> = [
      ['escape', (v) => [{ ...v[0], path: 'vendor/../../x.css' }]],
      ['absolute', (v) => [{ ...v[0], path: '/etc/passwd' }]],
      ['other digest', (v) => [{ ...v[0], path: `vendor/${'0'.repeat(64)}.woff2` }]],
      ['unknown ext', (v) => [{ ...v[0], path: `vendor/${v[0]!.sha256}.exe` }]],
      ['http url', (v) => [{ ...v[0], urls: ['http://fonts.gstatic.com/x.woff2'] }]],
      ['credentials', (v) => [{ ...v[0], urls: ['https://u:p@cdn.test/x.woff2'] }]],
      ['no url', (v) => [{ ...v[0], urls: [] }]],
      ['site escape', (v) => [{ ...v[0], site: ['../x.css'] }]],
      ['duplicate', (v) => [v[0], v[0]]],
      ['too many', (v) => Array.from({ length: 257 }, (_, i) => ({ ...v[0], urls: [`https://cdn.test/${i}.woff2`] }))],
      ['too big', (v) => [{ ...v[0], size: 8 * 1024 * 1024 + 1 }]],
      ['empty list', () => []],
      ['kind', (v) => [{ ...v[0], kind: 'images' }]],
    ];
    for (const [what, edit] of bad) {
      const m = { ...manifest, vendor: edit(manifest.vendor!) };
      expect(() => parseManifest(Buffer.from(JSON.stringify(m))), what).toThrow(/AIRLOCK_BAD_MANIFEST|not a valid airlock-package\/1 manifest/);
    }
  });

  it('bounded mutation fuzz of the vendor field (re-signed): exit 4 with the store unchanged, or a clean import', async () => {
    let refused = 0;
    let accepted = 0;
    let i = 0;
    let skipped = 0;
    const check = async (what: string, p: string) => {
      const before = await treeDigest(store);
      try {
        await verifyPackage(p, { trust: [publicKey] });
        await importPackage(p, { store, trust: [publicKey] });
        accepted++;
      } catch (err) {
        expect(err, `${what}: ${(err as Error).message}`).toBeInstanceOf(AirlockError);
        expect((err as AirlockError).exitCode, `${what}: ${(err as Error).message}`).toBe(4);
        expect(await treeDigest(store), `${what}: the store changed`).toBe(before);
        refused++;
      }
    };
    // Structural mutants of the field (each with its own label, so an accepted one is a new version).
    for (const m of jsonMutants(manifest.vendor, 60, 0x17f0)) {
      // 5,000 nested arrays overflow JSON.stringify itself; the depth bound before parsing is tested in manifest-bounds.test.ts
      if (m.what.endsWith('→ deep')) {
        skipped++;
        continue;
      }
      const label = `jm${i++}`;
      await check(`vendor mutant #${m.index} (${m.what})`, await pkgWith(`${label}.airlock`, { ...manifest, version: label, vendor: m.value }, members()));
    }
    // Byte mutants of the field's JSON text inside an otherwise valid manifest.
    const prefix = JSON.stringify({ ...manifest, vendor: undefined }).slice(0, -1);
    for (const m of mutants(Buffer.from(JSON.stringify(manifest.vendor)), 60, 0x17f1)) {
      const label = `bm${i++}`;
      const text = `${prefix.replace(/"version":"[^"]*"/, `"version":"${label}"`)},"vendor":${m.bytes.toString('latin1')}}`;
      await check(`byte mutant #${m.index} (${m.mutation} at ${m.at})`, await pkgWith(`${label}.airlock`, text, members()));
    }
    // Member mutants: the right manifest, vendored bytes mutated.
    for (const m of mutants(files.get(manifest.vendor![0]!.path)!, 20, 0x17f2)) {
      const label = `mm${i++}`;
      const ms = members();
      ms[0] = { name: ms[0]!.name, data: m.bytes };
      await check(`member mutant #${m.index} (${m.mutation})`, await pkgWith(`${label}.airlock`, { ...manifest, version: label }, ms));
    }
    expect(refused).toBeGreaterThan(100);
    expect(refused + accepted + skipped).toBe(140);
    expect(skipped).toBeLessThan(15);
  }, 120_000);
});
