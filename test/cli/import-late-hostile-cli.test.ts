/**
 * Late hostile inputs to import, inspect and verify, through the built binary: a refused
 * `import --activate` changes nothing (the state file is read before anything is staged), a
 * manifest that is not JSON is described in words with a position (never the parser's text or
 * the input's bytes), and a signed manifest that names a key twice is refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, sign } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { mkdtemp, readFile, readdir, rm, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tar from 'tar';
import { importPackage } from '../../src/store/index.js';
import { encodeDeltaManifest, readDelta } from '../../src/delta/index.js';
import { writeMembers } from '../../src/delta/write.js';
import { airlock, type RunResult } from '../helpers/bin.js';
import { scratch } from '../helpers/scratch.js';
import { buildPackage, makeKey, makeTempDir, sampleSite, type TestKey } from '../store/helpers.js';
import { lastAudit, storeDigest } from '../store/trust-helpers.js';

let dir: string;
let key: TestKey;
let pristine: string;
let v2: string;
let v3: string;
let n = 0;

beforeAll(async () => {
  dir = await makeTempDir('airlock-import-late-hostile-');
  key = await makeKey(dir);
  pristine = join(dir, 'pristine');
  for (const v of ['v1', 'v2']) {
    const pkg = await buildPackage(dir, { version: v, files: sampleSite(v), key });
    v2 = pkg;
    await importPackage(pkg, { store: pristine, trust: [key.pub], activate: true });
  }
  v3 = await buildPackage(dir, { version: 'v3', files: sampleSite('v3'), key });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const paths = scratch(() => dir);
const fresh = paths.fresh;
const copyStore = async (): Promise<string> => paths.copy(pristine);

/** Exit `status`, the code last on stderr, and none of V8's or a library's own text. */
function refused(r: RunResult, status: number, code: string, words: RegExp): void {
  expect(r.signal, `killed: ${r.stderr}`).toBeNull();
  expect(r.status, r.stderr).toBe(status);
  expect(r.stderr).toMatch(new RegExp(`\\[${code}\\]\\n?$`));
  expect(r.stderr).toMatch(words);
  expect(r.stderr).not.toMatch(/Unexpected token|Expected property name|is not valid JSON:|AIRLOCK_INTERNAL/);
}

/**
 * A package whose airlock.json is exactly `manifestText` (not re-serialised), signed by `signer`
 * (a raw 64-byte Ed25519 signature of those bytes) when given, with the archive of a real package.
 */
async function handMadePackage(name: string, version: string, edit: (text: string) => string | Buffer, signer?: TestKey): Promise<string> {
  const src = await buildPackage(dir, { version, files: sampleSite(version), name: `${name}-src.airlock` });
  const work = await mkdtemp(join(dir, 'hand-'));
  await tar.x({ file: src, cwd: work });
  const edited = edit(await readFile(join(work, 'airlock.json'), 'utf8'));
  const bytes = typeof edited === 'string' ? Buffer.from(edited, 'utf8') : edited;
  await writeFile(join(work, 'airlock.json'), bytes);
  const members = ['airlock.json'];
  if (signer) {
    await writeFile(join(work, 'airlock.json.sig'), sign(null, bytes, signer.priv));
    members.push('airlock.json.sig');
  }
  members.push('bundle.tar.gz');
  const out = join(dir, `${name}.airlock`);
  await tar.c({ file: out, cwd: work, portable: true }, members);
  return out;
}

describe('a refused import --activate changes nothing', () => {
  const cases: [string, (state: string) => Promise<void>][] = [
    ['a state.json pointing outside the store', (s) => writeFile(s, '{"active":"../../etc","previous":null}\n')],
    ['a 50 MB state.json', (s) => writeFile(s, Buffer.alloc(50 * 1024 * 1024, 0x20))],
  ];
  for (const [what, damage] of cases) {
    it(`${what}: import --activate is refused (exit 2, AIRLOCK_BAD_STATE) and no version is committed or audited`, async () => {
      const store = await copyStore();
      await damage(join(store, 'state.json'));
      const before = await storeDigest(store);
      const log = await readFile(join(store, 'audit.log'));
      const r = airlock(['import', v3, '--store', store, '--trust', key.pubPath, '--activate']);
      refused(r, 2, 'AIRLOCK_BAD_STATE', /state/);
      expect(r.stderr).not.toMatch(/committed/);
      expect(await readdir(join(store, 'versions'))).toEqual(['v1', 'v2']);
      expect(await storeDigest(store)).toBe(before);
      expect(await readFile(join(store, 'audit.log'))).toEqual(log);
    });
  }

  it('a damaged state.json: re-importing a version already in the store with --activate adds no audit line', async () => {
    const store = await copyStore();
    await writeFile(join(store, 'state.json'), '{"active":"../../etc","previous":null}\n');
    const before = await storeDigest(store);
    const log = await readFile(join(store, 'audit.log'));
    refused(airlock(['import', v2, '--store', store, '--trust', key.pubPath, '--activate']), 2, 'AIRLOCK_BAD_STATE', /state/);
    expect(await storeDigest(store)).toBe(before);
    expect(await readFile(join(store, 'audit.log'))).toEqual(log);
  });
});

describe('a manifest that is not JSON is described in words, with a position only', () => {
  const texts: [string, string, RegExp][] = [
    ['a bare word after the brace', '{nope}', /at character 1\b/],
    // V8 gives no position for an unexpected token: then the words alone
    ['NaN as a value', '{"sequence": NaN, "x":1}', /is not valid JSON \[/],
  ];
  for (const [what, text, at] of texts) {
    it(`${what}: import, inspect and verify say "not valid JSON" (exit 4, AIRLOCK_BAD_MANIFEST), never V8's text or the bytes`, async () => {
      const pkg = await handMadePackage(`notjson-${++n}`, 'v9', () => text);
      const store = await copyStore();
      const before = await storeDigest(store);
      for (const args of [
        ['import', pkg, '--store', store, '--trust', key.pubPath],
        ['inspect', pkg],
        ['verify', pkg, '--allow-unsigned'],
      ]) {
        const r = airlock(args);
        refused(r, 4, 'AIRLOCK_BAD_MANIFEST', /airlock\.json is not valid JSON/);
        expect(r.stderr).toMatch(at);
        expect(r.stderr).not.toMatch(/NaN|nope/);
      }
      expect(await storeDigest(store)).toBe(before);
    });
  }

  it('a manifest that is not UTF-8: inspect and verify say so in words (exit 4, AIRLOCK_BAD_MANIFEST)', async () => {
    const pkg = await handMadePackage(`notutf8-${++n}`, 'v9', () => Buffer.from('{"format": "\xff"}', 'latin1'));
    for (const args of [
      ['inspect', pkg],
      ['verify', pkg, '--allow-unsigned'],
    ]) {
      refused(airlock(args), 4, 'AIRLOCK_BAD_MANIFEST', /airlock\.json is not UTF-8 text/);
    }
  });
});

describe('a signed manifest that names a key twice', () => {
  it('"version": "f1", "version": "f2" signed by a trusted key: import is refused (exit 4, AIRLOCK_BAD_MANIFEST, naming the key); nothing changes', async () => {
    const pkg = await handMadePackage('dupkey', 'f1', (t) => t.replace('"version": "f1",', '"version": "f1",\n  "version": "f2",'), key);
    const store = await copyStore();
    const before = await storeDigest(store);
    for (const args of [
      ['import', pkg, '--store', store, '--trust', key.pubPath],
      ['verify', pkg, '--trust', key.pubPath],
      ['inspect', pkg],
    ]) {
      const r = airlock(args);
      refused(r, 4, 'AIRLOCK_BAD_MANIFEST', /airlock\.json names the key "version" twice/);
    }
    expect(await readdir(join(store, 'versions'))).toEqual(['v1', 'v2']);
    expect(await storeDigest(store)).toBe(before);
  });

  it('a key named twice inside a nested object (archive.format) is refused too', async () => {
    const pkg = await handMadePackage('dupnested', 'f3', (t) => t.replace('"format": "tar.gz",', '"format": "tar.gz",\n    "format": "tar.gz",'), key);
    refused(airlock(['verify', pkg, '--trust', key.pubPath]), 4, 'AIRLOCK_BAD_MANIFEST', /airlock\.json names the key "format" twice/);
  });
});

describe("a hostile delta is described in words, never in zlib's or the patch decoder's text", () => {
  let base: string;
  let real: string;
  let store: string;
  beforeAll(async () => {
    const keyFile = join(dir, 'delta-signer.key');
    await writeFile(keyFile, key.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const site = (tag: string) => ({ ...sampleSite('d'), 'guide/start.html': `<h1>Start ${tag}</h1>${'<p>same</p>'.repeat(200)}` });
    base = await buildPackage(dir, { version: 'd1', files: site('d1'), key });
    const target = await buildPackage(dir, { version: 'd2', files: site('d2'), key });
    const r = airlock(['delta', base, target, '--out', join(dir, 'deltas'), '--sign-key', keyFile, '--json']);
    expect(r.status, r.stderr).toBe(0);
    real = (JSON.parse(r.stdout) as { delta: string }).delta;
    store = fresh('delta-store');
    await importPackage(base, { store, trust: [key.pub] });
  });

  /** The real delta with its ops.json.gz (the envelope names its size and digest) or target.json.gz replaced; the delta manifest signed. */
  async function hostileDelta(name: string, o: { opsGz?: Buffer; expandedSize?: number; targetPatch?: Buffer }): Promise<string> {
    const l = await readDelta(real);
    const file = await readFile(real);
    const { manifestBytes, opsGz } = encodeDeltaManifest(l.manifest);
    const envelope = JSON.parse(manifestBytes.toString('utf8')) as { opsFile: { size: number; sha256: string; expandedSize: number } };
    const ops = o.opsGz ?? opsGz;
    envelope.opsFile = {
      size: ops.length,
      sha256: createHash('sha256').update(ops).digest('hex'),
      expandedSize: o.expandedSize ?? envelope.opsFile.expandedSize,
    };
    const bytes = Buffer.from(JSON.stringify(envelope) + '\n');
    const members: { name: string; body: { bytes: Buffer } }[] = [
      { name: 'airlock.json', body: { bytes } },
      { name: 'airlock.json.sig', body: { bytes: sign(null, bytes, key.priv) } },
      { name: 'ops.json.gz', body: { bytes: ops } },
      { name: 'target.json.gz', body: { bytes: o.targetPatch ?? l.target.patch } },
      ...l.target.signatures.map((s, i) => ({ name: i === 0 ? 'target.json.sig' : `target.json.sig.${i + 1}`, body: { bytes: s } })),
      { name: 'payload.gz', body: { bytes: Buffer.from(file.subarray(l.payload.offset, l.payload.offset + l.payload.size)) } },
    ];
    const out = join(dir, `${name}.airlock`);
    await writeMembers(out, members, new Date('2025-01-15T12:00:00Z'));
    return out;
  }

  const cases: [string, () => Promise<string>, string, RegExp][] = [
    [
      'an ops.json.gz that is not gzip',
      () => hostileDelta('ops-not-gzip', { opsGz: Buffer.from('not gzip at all, just text\n'.repeat(4)) }),
      'AIRLOCK_BAD_DELTA',
      /ops\.json\.gz is not gzip data/,
    ],
    [
      'an ops.json.gz that expands beyond what its envelope declares (a gzip bomb)',
      () => hostileDelta('ops-bomb', { opsGz: gzipSync(Buffer.alloc(1024 * 1024, 0x20)), expandedSize: 169 }),
      'AIRLOCK_BAD_DELTA',
      /ops\.json\.gz expands to more than the 169 bytes/,
    ],
    [
      'a target.json.gz whose patch is not a patch',
      () => hostileDelta('bad-patch', { targetPatch: gzipSync(Buffer.from('this is not a fossil delta')) }),
      'AIRLOCK_DELTA_PATCH',
      /target\.json\.gz does not rebuild the target manifest/,
    ],
  ];
  for (const [what, make, code, words] of cases) {
    it(`${what}: import is refused (exit 4, ${code}) in words; nothing changes`, async () => {
      const pkg = await make();
      const before = await storeDigest(store);
      const r = airlock(['import', pkg, '--store', store, '--trust', key.pubPath]);
      refused(r, 4, code, words);
      expect(r.stderr).not.toMatch(/incorrect header check|Cannot create a Buffer|size integer not terminated|unexpected end of file/);
      expect(await storeDigest(store)).toBe(before);
    });
  }
});

describe('a large zero-filled file given as a package', () => {
  // Sparse (truncate): no disk written. Import refuses it from its first block, as verify does;
  // the audit line names it without hashing it whole (its sha256 would cost more than the refusal).
  it('200 MB of zeros: import is refused at its head (exit 4, AIRLOCK_PACKAGE_MEMBERS), nothing staged, the audit line records no sha256', async () => {
    const pkg = join(dir, 'zero.airlock');
    await writeFile(pkg, '');
    await truncate(pkg, 200 * 1024 * 1024);
    const store = await copyStore();
    const before = await storeDigest(store);
    const r = airlock(['import', pkg, '--store', store, '--trust', key.pubPath]);
    refused(r, 4, 'AIRLOCK_PACKAGE_MEMBERS', /airlock\.json was expected/);
    refused(airlock(['verify', pkg, '--trust', key.pubPath]), 4, 'AIRLOCK_PACKAGE_MEMBERS', /airlock\.json was expected/);
    expect(await storeDigest(store)).toBe(before);
    expect(await readdir(store)).not.toContain('staging');
    expect(await lastAudit(store)).toMatchObject({ outcome: 'refused', reason: 'AIRLOCK_PACKAGE_MEMBERS', package: pkg, packageSha256: null });
    await rm(pkg);
  });

  it('a small one (64 KiB of zeros) is refused the same way and its sha256 is recorded', async () => {
    const pkg = join(dir, 'zero-small.airlock');
    await writeFile(pkg, Buffer.alloc(64 * 1024));
    const store = await copyStore();
    refused(airlock(['import', pkg, '--store', store, '--trust', key.pubPath]), 4, 'AIRLOCK_PACKAGE_MEMBERS', /airlock\.json was expected/);
    expect(await lastAudit(store)).toMatchObject({
      outcome: 'refused',
      reason: 'AIRLOCK_PACKAGE_MEMBERS',
      package: pkg,
      packageSha256: createHash('sha256')
        .update(Buffer.alloc(64 * 1024))
        .digest('hex'),
    });
  });
});
