import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyFile, mkdir, readFile, readdir, rm, truncate, writeFile, open } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { AirlockError, EXIT } from '../../src/errors.js';
import { verifyPackage, readPackage } from '../../src/package/index.js';
import { MAX_VOLUMES, openVolumes, parseSplitSize, planVolumes, splitPackage, SPLIT_PRESETS } from '../../src/package/volumes/index.js';
import { headerSize } from '../../src/package/volumes/format.js';
import { importVolumes } from '../../src/store/index.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, treeDigest, type TestKey } from '../store/helpers.js';
import { mutants } from '../helpers/mutate.js';

const MiB = 1024 * 1024;
let dir: string;
let key: TestKey;
let other: TestKey;
let n = 0;

beforeAll(async () => {
  dir = await makeTempDir('airlock-volumes-');
  key = await makeKey(dir);
  other = await makeKey(dir, 'other');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** A signed package split into volumes of `split` bytes in a folder of its own; returns the volume paths. */
async function splitSet(
  o: { version?: string; split?: number; signed?: boolean; extra?: number } = {},
): Promise<{ vols: string[]; folder: string; pkgBytes: Buffer }> {
  const folder = join(dir, `set-${n++}`);
  await mkdir(folder);
  const pkg = await buildPackage(folder, {
    version: o.version ?? 'v1',
    files: sampleSite(o.version ?? 'v1', o.extra ?? 24),
    key: o.signed === false ? undefined : key,
  });
  const pkgBytes = await readFile(pkg);
  const r = await splitPackage(pkg, { split: o.split ?? 4096, signKey: o.signed === false ? undefined : key.priv });
  await rm(pkg);
  return { vols: r.volumes, folder, pkgBytes };
}

async function refusal(p: Promise<unknown>): Promise<AirlockError> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AirlockError);
  return err as AirlockError;
}

describe('--split SIZE', () => {
  it('parses presets and units; refuses nonsense and sizes too small to hold a header', () => {
    expect(parseSplitSize('fat32')).toBe(4000 * MiB);
    expect(parseSplitSize('FAT32')).toBe(4_194_304_000);
    expect(parseSplitSize('dvd')).toBeLessThanOrEqual(4_700_000_000);
    expect(parseSplitSize('dvd') % MiB).toBe(0);
    expect(parseSplitSize('bd25')).toBeLessThanOrEqual(25_000_000_000);
    expect(parseSplitSize('700M')).toBe(700 * MiB);
    expect(parseSplitSize('700MiB')).toBe(700 * MiB);
    expect(parseSplitSize('700MB')).toBe(700_000_000);
    expect(parseSplitSize('8KiB')).toBe(8192);
    expect(parseSplitSize('4096')).toBe(4096);
    for (const bad of ['', 'x', '-5', '1.5G', '10', '4095', '9999999999999999G', '5 parsecs']) {
      expect(() => parseSplitSize(bad), bad).toThrow(/--split/);
    }
  });

  it("fat32 math: a 10 GB package makes 3 volumes, each below FAT32's 4 GiB − 1 file limit, payloads adding up exactly", () => {
    const size = 10_000_000_000;
    for (const signed of [true, false]) {
      const p = planVolumes(size, SPLIT_PRESETS.fat32!, signed);
      expect(p.count).toBe(3);
      expect(p.header).toBe(headerSize(3, signed));
      expect(p.sizes.reduce((a, b) => a + b, 0)).toBe(size);
      for (const s of p.sizes) expect(p.header + s).toBeLessThanOrEqual(4000 * MiB);
      expect(p.header + p.sizes[0]!).toBe(4000 * MiB); // full volumes use the whole budget
      expect(4000 * MiB).toBeLessThan(2 ** 32 - 1);
    }
    // 4,000 MiB × 3 minus headers is the edge: one byte more needs a fourth volume.
    const edge = planVolumes(size, SPLIT_PRESETS.fat32!, true);
    const full = 3 * edge.payload;
    expect(planVolumes(full, SPLIT_PRESETS.fat32!, true).count).toBe(3);
    expect(planVolumes(full + 1, SPLIT_PRESETS.fat32!, true).count).toBe(4);
    expect(planVolumes(4_699_000_000, SPLIT_PRESETS.dvd!, true).count).toBe(1);
    expect(planVolumes(50_000_000_000, SPLIT_PRESETS.bd25!, true).count).toBe(3);
  });

  it('refuses a split that would need more than 999 volumes (exit 2) instead of writing them', () => {
    expect(() => planVolumes(10_000_000_000, 8192, true)).toThrow(/999 volumes/);
    const p = planVolumes(MAX_VOLUMES * 50_000, 200_000, true); // headers of a 999-volume table are ~100 KB
    expect(p.count).toBeLessThanOrEqual(MAX_VOLUMES);
    expect(p.header + p.payload).toBe(200_000);
  });
});

describe('volumes: split, then read in place', () => {
  it('writes NAME.airlock.001… of at most SIZE bytes; the set verifies in place and reads back as the exact package', async () => {
    const { vols, folder, pkgBytes } = await splitSet();
    expect(vols.length).toBeGreaterThan(2);
    expect(vols.map((v) => basename(v))).toEqual(vols.map((_, i) => `v1.airlock.${String(i + 1).padStart(3, '0')}`));
    for (const v of vols) expect((await readFile(v)).length).toBeLessThanOrEqual(4096);
    expect((await readdir(folder)).filter((f) => f.endsWith('.airlock')).length).toBe(0);
    const set = await openVolumes([vols[1]!], { trust: [key.pub] }); // any volume finds the others
    expect(set.paths).toEqual(vols);
    expect(set.signer).toMatch(/^sha256:/);
    const layout = await readPackage(set.input);
    expect(layout.manifest.version).toBe('v1');
    const r = await verifyPackage(set.input, { trust: [key.pub] });
    expect(r.files).toBeGreaterThan(10);
    // The payloads are the package, byte for byte.
    const { SpanFile } = await import('../../src/archive/index.js');
    const f = await SpanFile.open(set.input.spans);
    const back = Buffer.alloc(f.size);
    let pos = 0;
    while (pos < f.size) pos += (await f.read(back, pos, f.size - pos, pos)).bytesRead;
    await f.close();
    expect(back.equals(pkgBytes)).toBe(true);
  });

  it('zip archives (random access through the central directory) read across volume boundaries', async () => {
    const folder = join(dir, `zip-${n++}`);
    await mkdir(folder);
    const { makePackage } = await import('../helpers/make-package.js');
    const made = await makePackage({ outDir: folder, format: 'zip', signKey: key.priv });
    const r = await splitPackage(made.pkgPath, { split: 16384, signKey: key.priv });
    await rm(made.pkgPath);
    const set = await openVolumes(r.volumes, { trust: [key.pub] });
    expect((await verifyPackage(set.input, { trust: [key.pub] })).manifest.archive.format).toBe('zip');
  });

  it('volumes spread over several folders are found with dirs (one per medium)', async () => {
    const { vols, folder } = await splitSet();
    const media = [join(folder, 'a'), join(folder, 'b'), join(folder, 'c')];
    for (const m of media) await mkdir(m);
    const moved = await Promise.all(
      vols.map(async (v, i) => {
        const to = join(media[i % 3]!, basename(v));
        await copyFile(v, to);
        await rm(v);
        return to;
      }),
    );
    await expect(openVolumes([moved[0]!], { trust: [key.pub] })).rejects.toMatchObject({ code: 'AIRLOCK_VOLUME_MISSING' });
    const set = await openVolumes([moved[0]!], { trust: [key.pub], dirs: [media[1]!, media[2]!] });
    expect(set.paths).toEqual(moved);
    const set2 = await openVolumes([...moved].reverse(), { trust: [key.pub] }); // the whole set, any order
    expect(set2.paths).toEqual(moved);
  });
});

describe('volume attacks and accidents are refused (exit 4) naming the volume, before anything is read on their word', () => {
  it('missing volume: named with its index and file name', async () => {
    const { vols } = await splitSet();
    await rm(vols[1]!);
    const e = await refusal(openVolumes([vols[0]!], { trust: [key.pub] }));
    expect(e.code).toBe('AIRLOCK_VOLUME_MISSING');
    expect(e.exitCode).toBe(EXIT.VERIFICATION);
    expect(e.message).toContain('v1.airlock.002');
  });

  it('duplicated volume: the same index twice in two folders is refused naming both copies', async () => {
    const { vols, folder } = await splitSet();
    await mkdir(join(folder, 'other'));
    const dup = join(folder, 'other', basename(vols[2]!));
    await copyFile(vols[2]!, dup);
    const e = await refusal(openVolumes([vols[0]!], { trust: [key.pub], dirs: [join(folder, 'other')] }));
    expect(e.code).toBe('AIRLOCK_VOLUME_DUPLICATE');
    expect(e.message).toContain(vols[2]!);
    expect(e.message).toContain(dup);
  });

  it('truncated volume (a copy cut short on a full stick): named; so is one with bytes appended', async () => {
    const { vols } = await splitSet();
    await truncate(vols[1]!, (await readFile(vols[1]!)).length - 1);
    const e = await refusal(openVolumes([vols[0]!], { trust: [key.pub] }));
    expect(e.code).toBe('AIRLOCK_VOLUME_TRUNCATED');
    expect(e.details.subject).toBe(vols[1]);
    const { vols: v2 } = await splitSet();
    await writeFile(v2[2]!, Buffer.from('x'), { flag: 'a' });
    expect((await refusal(openVolumes([v2[0]!], { trust: [key.pub] }))).details.subject).toBe(v2[2]);
  });

  it('reordered volumes: .002 and .003 swapped by name are refused naming the misnamed file', async () => {
    const { vols } = await splitSet();
    const tmp = `${vols[1]!}.swap`;
    await copyFile(vols[1]!, tmp);
    await copyFile(vols[2]!, vols[1]!);
    await copyFile(tmp, vols[2]!);
    await rm(tmp);
    const e = await refusal(openVolumes([vols[0]!], { trust: [key.pub] }));
    expect(e.code).toBe('AIRLOCK_VOLUME_ORDER');
    expect(e.details.subject).toBe(vols[1]);
  });

  it("foreign volume: another package's .002 under this set's name is refused naming it", async () => {
    const a = await splitSet({ version: 'v1' });
    const b = await splitSet({ version: 'v1', extra: 25 }); // same name, different package
    await copyFile(b.vols[1]!, a.vols[1]!);
    const e = await refusal(openVolumes([a.vols[0]!], { trust: [key.pub] }));
    expect(e.code).toBe('AIRLOCK_VOLUME_FOREIGN');
    expect(e.details.subject).toBe(a.vols[1]);
  });

  it('a set mixing two packages: volumes of two packages given together are refused naming both', async () => {
    const a = await splitSet({ version: 'v1' });
    const b = await splitSet({ version: 'v2' });
    const e = await refusal(openVolumes([a.vols[0]!, b.vols[1]!], { trust: [key.pub] }));
    expect(e.code).toBe('AIRLOCK_VOLUME_MIXED');
    expect(e.message).toContain(a.vols[0]!);
    expect(e.message).toContain(b.vols[1]!);
  });

  it('damaged volume: a flipped payload byte names just that volume (re-copy it), the others pass', async () => {
    const { vols } = await splitSet();
    const fh = await open(vols[2]!, 'r+');
    const size = (await fh.stat()).size;
    const b = Buffer.alloc(1);
    await fh.read(b, 0, 1, size - 10);
    b[0] = b[0]! ^ 0x40;
    await fh.write(b, 0, 1, size - 10);
    await fh.close();
    const e = await refusal(openVolumes([vols[0]!], { trust: [key.pub] }));
    expect(e.code).toBe('AIRLOCK_VOLUME_DIGEST');
    expect(e.exitCode).toBe(EXIT.VERIFICATION);
    expect(e.details.volumes).toEqual([vols[2]]);
    expect(e.message).toMatch(/copy it again/);
  });

  it('forged volume table: a table re-signed by an untrusted key, or unsigned, is refused before any payload is read', async () => {
    const signedByOther = join(dir, `forge-${n++}`);
    await mkdir(signedByOther);
    const pkg = await buildPackage(signedByOther, { version: 'v1', files: sampleSite('v1', 12), key });
    const r = await splitPackage(pkg, { split: 4096, signKey: other.priv });
    expect((await refusal(openVolumes([r.volumes[0]!], { trust: [key.pub] }))).code).toBe('AIRLOCK_UNTRUSTED_SIGNATURE');
    // Trusting the other key too: the table then verifies, but the package inside is not that key's.
    expect((await refusal(openVolumes([r.volumes[0]!], { trust: [other.pub] }))).code).toBe('AIRLOCK_VOLUME_SIGNER');
    const u = await splitSet({ signed: false });
    expect((await refusal(openVolumes([u.vols[0]!], { trust: [key.pub] }))).code).toBe('AIRLOCK_UNSIGNED');
    expect((await openVolumes([u.vols[0]!], { trust: [], allowUnsigned: true })).signed).toBe(false);
  });

  it("header fuzz: bounded mutations of a volume's header and table are all refused (exit 4) and the store stays as it was", async () => {
    const { vols } = await splitSet();
    const store = join(dir, `fuzz-store-${n++}`);
    await mkdir(store);
    await writeFile(join(store, 'marker'), 'x');
    const before = await treeDigest(store);
    const original = await readFile(vols[1]!);
    const header = headerSize(vols.length, true);
    let refused = 0;
    const start = Date.now();
    for (const m of mutants(original.subarray(0, header + 16), 120, 0x1515)) {
      if (Date.now() - start > 20_000) break;
      await writeFile(vols[1]!, Buffer.concat([m.bytes, original.subarray(header + 16)]));
      const err = await importVolumes([vols[0]!], { store, trust: [key.pub] }).then(
        () => null,
        (e: unknown) => e,
      );
      if (err === null) {
        // Only a mutation that changed nothing may pass.
        expect(Buffer.concat([m.bytes, original.subarray(header + 16)]).equals(original), `mutant ${m.index} (${m.mutation}) was accepted`).toBe(true);
        continue;
      }
      expect(err, `mutant ${m.index}`).toBeInstanceOf(AirlockError);
      expect((err as AirlockError).exitCode, `mutant ${m.index} (${m.mutation}): ${(err as Error).message}`).toBe(EXIT.VERIFICATION);
      expect(await treeDigest(store)).toBe(before);
      refused++;
    }
    expect(refused).toBeGreaterThan(50);
  }, 40_000);
});

describe('volume table names', () => {
  it('path traversal in an (unsigned) table name: "../x" and names with slashes or control characters are refused', async () => {
    const { TableSchema } = await import('../../src/package/volumes/format.js');
    const base = { format: 'airlock-volumes/1', packageId: 'a'.repeat(64), packageSize: 1, volumes: [{ size: 1, sha256: 'b'.repeat(64) }] };
    expect(TableSchema.safeParse({ ...base, name: 'docs.example.com-v1.airlock' }).success).toBe(true);
    for (const name of ['../x.airlock', 'a/b', 'a\\b', '..', '.', 'a\u0000b', 'a\nb', '']) {
      expect(TableSchema.safeParse({ ...base, name }).success, JSON.stringify(name)).toBe(false);
    }
  });
});

describe('volume table bounds', () => {
  it('deeply nested JSON in an unsigned table (stack exhaustion) is refused before it is parsed', async () => {
    const { decodeTable, tableRoom } = await import('../../src/package/volumes/format.js');
    const room = tableRoom(1);
    const deep = Buffer.alloc(room, 0x20);
    Buffer.from('['.repeat(room / 2 - 1) + ']'.repeat(room / 2 - 1)).copy(deep);
    const fixed = { index: 1, count: 1, tableLength: room, signatureLength: 0, packageId: 'a'.repeat(64) };
    expect(() => decodeTable(deep, fixed, 'x.airlock.001')).toThrow(/nests deeper/);
  });

  it('a table that is not JSON, or not the schema, is refused in words: no parser or validation library wording', async () => {
    const { decodeTable, tableRoom } = await import('../../src/package/volumes/format.js');
    const room = tableRoom(1);
    const fixed = { index: 1, count: 1, tableLength: room, signatureLength: 0, packageId: 'a'.repeat(64) };
    const table = (text: string) => Buffer.concat([Buffer.from(text), Buffer.alloc(room - Buffer.byteLength(text), 0x20)]);
    const words = (text: string) => {
      try {
        decodeTable(table(text), fixed, 'x.airlock.001');
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error(`accepted ${text}`);
    };
    const notJson = words('{"packageId": tru');
    expect(notJson).toMatch(/^volume x\.airlock\.001: the volume table is not valid JSON/);
    expect(notJson).not.toMatch(/Unexpected|SyntaxError|token/);
    for (const bad of ['[1,2]', '{"volumes":"all","packageId":7}', '{}', `{"volumes":[[]],"packageSize":"x","extra":{"a":1}}`]) {
      const m = words(bad);
      expect(m, bad).toMatch(/^volume x\.airlock\.001: invalid volume table: /);
      expect(m, bad).not.toMatch(/Invalid input|expected \w+, received|Too big|Too small|Unrecognized key|Invalid option/);
    }
  });
});
