import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock, airlockAsync } from '../helpers/bin.js';
import { startBin } from '../helpers/served.js';
import { makeCert } from '../helpers/tls.js';
import { tokensFile } from '../mirror/helpers.js';
import { startEmulator } from '../../src/emulator/index.js';
import { FIXTURE_SITE, makeArchive, makePackage, walkSite } from '../helpers/make-package.js';
import { splitPackage } from '../../src/package/volumes/index.js';
import { loadPrivateKey } from '../../src/package/index.js';

/**
 * What a new user meets first, run through the built binary: every refusal names the thing at
 * fault, says what is wrong in words and what to do, and never shows raw system or library text.
 */
let dir: string;
let store: string;
let pkg: string;
const RAW = /\bE[A-Z]{3,}\b(?!_)|error:[0-9A-F]{8}|DECODER routines|routines::/;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-user-errors-'));
  expect(airlock(['keygen', '--out', join(dir, 'k')]).status).toBe(0);
  await makeArchive(FIXTURE_SITE, 'tar.gz', join(dir, 'site.tgz'));
  const packed = airlock([
    'pack',
    join(dir, 'site.tgz'),
    '--domain',
    'docs.example.com',
    '--version-label',
    'v1',
    '--sign-key',
    join(dir, 'k.key'),
    '--out',
    dir,
  ]);
  expect(packed.status).toBe(0);
  pkg = packed.stdout.trim();
  store = join(dir, 'store');
  expect(airlock(['import', pkg, '--store', store, '--trust', join(dir, 'k.pub'), '--activate']).status).toBe(0);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a version that is not in the store', () => {
  it('activate v9 lists the versions the store holds', () => {
    const r = airlock(['activate', 'v9', '--store', store]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/version "v9" is not in store .*; it holds v1\b/);
    expect(r.stderr).toContain('AIRLOCK_VERSION_NOT_FOUND');
  });
  it('activate in a store with no version says so and how to import one', async () => {
    const empty = join(dir, 'empty-store');
    await mkdir(join(empty, 'versions'), { recursive: true });
    const r = airlock(['activate', 'v9', '--store', empty]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/version "v9" is not in store .*: the store holds no version yet; import one \(airlock import PKG --store /);
  });
  it('serve --version v9 lists the versions and never mentions the values file', () => {
    const r = airlock(['serve', '--store', store, '--version', 'v9', '--port', '0']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/version v9 is not in store .*; it holds v1\b/);
    expect(r.stderr).not.toMatch(/staticExport|bundleUrl/);
  });
});

describe('plain serve of an empty store', () => {
  it('says the store holds no version and how to import one, without values-file keys', async () => {
    const empty = join(dir, 'empty-serve');
    await mkdir(join(empty, 'versions'), { recursive: true });
    const r = airlock(['serve', '--store', empty, '--port', '0']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/store .*empty-serve holds no version yet; import one \(airlock import PKG --store .*empty-serve --activate\)/);
    expect(r.stderr).not.toMatch(/staticExport|bundleUrl/);
    expect(r.stderr).toContain('AIRLOCK_NOTHING_TO_SERVE');
  });
  it('a store with versions but none active says which to activate', async () => {
    const idle = join(dir, 'idle-store');
    expect(airlock(['import', pkg, '--store', idle, '--trust', join(dir, 'k.pub')]).status).toBe(0);
    const r = airlock(['serve', '--store', idle, '--port', '0']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/store .*idle-store has no active version; it holds v1: activate one \(airlock activate V --store .*idle-store\)/);
    expect(r.stderr).not.toMatch(/staticExport|bundleUrl/);
  });
  it('serve --values without a bundleUrl still names the values keys', async () => {
    const empty = join(dir, 'empty-values');
    await mkdir(join(empty, 'versions'), { recursive: true });
    const values = join(dir, 'values.yaml');
    const { writeFile } = await import('node:fs/promises');
    await writeFile(values, `store: ${empty}\n`);
    const r = airlock(['serve', '--values', values, '--port', '0']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/holds no version yet.*staticExport\.bundleUrl/);
  });
});

describe('PAGES in airlock list', () => {
  const pagesOf = (files: string[]) => files.filter((f) => /\.html?$/.test(f) && !/(^|\/)404\.html$/.test(f)).length;
  const listed = (st: string) => {
    const r = airlock(['list', '--store', st, '--json']);
    expect(r.status).toBe(0);
    return new Map((JSON.parse(r.stdout) as { versions: Array<{ version: string; pageCount: number | null }> }).versions.map((v) => [v.version, v.pageCount]));
  };
  let fixturePages: number;
  beforeAll(async () => {
    fixturePages = pagesOf(await walkSite(FIXTURE_SITE));
    expect(fixturePages).toBeGreaterThan(3);
  });

  it('pack writes the page count into the manifest; import and list show it', () => {
    const inspected = airlock(['inspect', pkg, '--json']);
    expect(JSON.parse(inspected.stdout)).toMatchObject({ manifest: { pageCount: fixturePages } });
    expect(listed(store).get('v1')).toBe(fixturePages);
    const table = airlock(['list', '--store', store]).stdout;
    expect(table).toMatch(new RegExp(`v1\\s+docs\\.example\\.com\\s+${fixturePages}\\s`));
    expect(table).not.toContain('?');
  });

  it('a package, a delta and volumes whose manifests carry no count are counted on import', async () => {
    const work = join(dir, 'no-count');
    const site2 = join(work, 'site2');
    await cp(FIXTURE_SITE, site2, { recursive: true });
    await writeFile(join(site2, 'extra-page.html'), '<!doctype html><title>extra</title><p>extra</p>');
    const noCount = (m: { pageCount: number | null }) => {
      m.pageCount = null;
    };
    const key = join(dir, 'k.key');
    const v1 = await makePackage({ outDir: join(work, 'a'), version: 'n1', signKey: key, mutate: noCount });
    const v2 = await makePackage({ outDir: join(work, 'b'), version: 'n2', siteDir: site2, signKey: key, mutate: noCount });
    const v3 = await makePackage({ outDir: join(work, 'c'), version: 'n3', signKey: key, mutate: noCount });
    expect(airlock(['inspect', v1.pkgPath]).stdout).toContain(`pages      ${fixturePages} (counted from the file list; the manifest carries no count)`);
    const st = join(work, 'store');
    const trust = ['--trust', join(dir, 'k.pub')];
    expect(airlock(['import', v1.pkgPath, '--store', st, ...trust]).status).toBe(0);
    const delta = airlock(['delta', v1.pkgPath, v2.pkgPath, '--out', join(work, 'd'), '--sign-key', key, '--json']);
    expect(delta.status).toBe(0);
    expect(airlock(['import', (JSON.parse(delta.stdout) as { delta: string }).delta, '--store', st, ...trust]).status).toBe(0);
    const { volumes } = await splitPackage(v3.pkgPath, { split: 8192, signKey: await loadPrivateKey(key) });
    expect(volumes.length).toBeGreaterThan(1);
    expect(airlock(['import', volumes[0]!, '--store', st, ...trust]).status).toBe(0);
    expect(Object.fromEntries(listed(st))).toEqual({ n1: fixturePages, n2: fixturePages + 1, n3: fixturePages });
    // Filled in at import (version.json), not only counted by list.
    for (const [v, n] of [
      ['n1', fixturePages],
      ['n2', fixturePages + 1],
      ['n3', fixturePages],
    ] as const) {
      expect(JSON.parse(await readFile(join(st, 'versions', v, 'version.json'), 'utf8'))).toMatchObject({ pageCount: n });
    }
  });

  it('an older store: a null count in version.json is counted from the stored manifest; an unreadable one is ? with a footnote', async () => {
    const st = join(dir, 'old-store');
    expect(airlock(['import', pkg, '--store', st, '--trust', join(dir, 'k.pub')]).status).toBe(0);
    const metaPath = join(st, 'versions', 'v1', 'version.json');
    await writeFile(metaPath, JSON.stringify({ ...JSON.parse(await readFile(metaPath, 'utf8')), pageCount: null }));
    expect(listed(st).get('v1')).toBe(fixturePages);
    expect(airlock(['list', '--store', st]).stdout).not.toContain('?');
    await writeFile(join(st, 'versions', 'v1', 'airlock.json'), 'not json');
    expect(listed(st).get('v1')).toBeNull();
    const table = airlock(['list', '--store', st]);
    expect(table.status).toBe(0);
    expect(table.stdout).toMatch(/v1\s+docs\.example\.com\s+\?\s/);
    expect(table.stdout).toMatch(/\n\? PAGES: the page count is unknown: the version's airlock\.json cannot be read .*airlock verify/);
  });
});

describe('fetch: the signing warning agrees with the summary', () => {
  it('from an airlock mirror with --trust: no "will not be signed" warning, and signed: true', async () => {
    const token = `svc_mirror_${'m'.repeat(24)}`;
    const tokens = await tokensFile(join(dir, 'mirror-tokens'), [token]);
    const mirror = await startBin(['serve', '--store', store, '--mirror', '--mirror-tokens', tokens, '--port', '0']);
    try {
      const f = await airlockAsync(
        ['fetch', '--domain', 'docs.example.com', '--api-url', mirror.url, '--out', join(dir, 'from-mirror'), '--trust', join(dir, 'k.pub'), '--json'],
        { env: { AIRLOCK_ADMIN_KEY: token } },
      );
      expect(f.status).toBe(0);
      expect(JSON.parse(f.stdout)).toMatchObject({ form: 'package', signed: true, signature: 'verified' });
      expect(f.stderr).not.toMatch(/not be signed|unsigned|--allow-unsigned/);
    } finally {
      await mirror.stop();
    }
  });
  it('from the service without --sign-key: warned unsigned (and --trust said to be unused), signed: false', async () => {
    const emu = await startEmulator({ timings: { queuedMs: 5, runningMs: 10 } });
    try {
      const f = await airlockAsync(
        [
          'fetch',
          '--domain',
          'docs.example.com',
          '--api-url',
          emu.url,
          '--out',
          join(dir, 'from-service'),
          '--trust',
          join(dir, 'k.pub'),
          '--version-label',
          's1',
          '--json',
        ],
        { env: { AIRLOCK_ADMIN_KEY: emu.keys.admin } },
      );
      expect(f.status).toBe(0);
      expect(JSON.parse(f.stdout)).toMatchObject({ signed: false, signature: 'none' });
      expect(f.stderr).toMatch(/warning: no --sign-key: the package will not be signed/);
      expect(f.stderr).toMatch(/--trust is not used: the service sent a raw export archive, not a signed package/);
    } finally {
      await emu.close();
    }
  });
});

describe('key files and other files a user names', () => {
  const refused = (args: string[], subject: RegExp, words: RegExp, todo: RegExp) => {
    const r = airlock(args, { cwd: dir });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(subject);
    expect(r.stderr).toMatch(words);
    expect(r.stderr).toMatch(todo);
    expect(r.stderr).not.toMatch(RAW);
    return r.stderr;
  };
  const KEYGEN = /airlock keygen --out PREFIX/;

  it('--trust nope.pub: does not exist, and how to get a key', () => {
    refused(['import', pkg, '--store', join(dir, 's-nope'), '--trust', 'nope.pub'], /nope\.pub/, /does not exist/, KEYGEN);
    refused(['verify', pkg, '--trust', 'nope.pub'], /nope\.pub/, /does not exist/, KEYGEN);
  });
  it('--sign-key given a .pub: a public key where the private key is needed', () => {
    refused(
      ['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', 'p2', '--sign-key', 'k.pub'],
      /k\.pub/,
      /holds a public key/,
      /--sign-key needs the private \.key file/,
    );
    refused(['sign', pkg, '--key', 'k.pub'], /k\.pub/, /holds a public key/, /--key needs the private \.key file/);
  });
  it('a folder given as a key: says so and what to give instead', () => {
    refused(['import', pkg, '--store', join(dir, 's-dir'), '--trust', dir], new RegExp(dir), /is a folder/, /give the key file itself/);
    refused(
      ['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', 'p3', '--sign-key', dir],
      new RegExp(dir),
      /is a folder/,
      /give the key file itself/,
    );
  });
  it('a file that is not a PEM key', () => {
    refused(['verify', pkg, '--trust', 'site.tgz'], /site\.tgz/, /is not a PEM public key/, KEYGEN);
    refused(['sign', pkg, '--key', 'site.tgz'], /site\.tgz/, /is not a PEM private key/, KEYGEN);
  });
  it('a bad key in STORE/trusted-keys/ names it and says to remove or replace it', async () => {
    const st = join(dir, 's-trusted');
    await mkdir(join(st, 'trusted-keys'), { recursive: true });
    await cp(join(dir, 'k.key'), join(st, 'trusted-keys', 'oops.pub'));
    refused(['import', pkg, '--store', st], /trusted-keys\/oops\.pub/, /holds a private key/, /remove it from .*trusted-keys or replace it/);
  });
  it('pack: an archive that does not exist, and an output folder that cannot be made', async () => {
    refused(['pack', 'nope.tgz', '--domain', 'docs.example.com'], /archive .*nope\.tgz/, /does not exist/, /check the path/);
    await writeFile(join(dir, 'a-file'), 'x');
    const r = airlock(['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', 'p4', '--out', join(dir, 'a-file', 'out')], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/output folder .*a-file\/out/);
    expect(r.stderr).not.toMatch(RAW);
  });
  it('TLS files: not a certificate, not a key, a key of another certificate, in words', async () => {
    makeCert(dir, 'one', 'one.key.pem');
    makeCert(dir, 'two', 'two.key.pem');
    const serve = (cert: string, key: string) => ['serve', '--store', store, '--port', '0', '--tls-cert', cert, '--tls-key', key];
    refused(serve('k.pub', 'one.key.pem'), /TLS certificate .*k\.pub/, /is not a PEM certificate/, /give the certificate file/);
    refused(serve('one.crt', 'one.crt'), /TLS key .*one\.crt/, /is not a PEM private key/, /give the private key/);
    refused(serve('one.crt', 'two.key.pem'), /TLS key .*two\.key\.pem/, /does not belong to certificate .*one\.crt/, /give the key made with that certificate/);
  });
  it('keygen into a path whose folder is a file: in words', async () => {
    const r = airlock(['keygen', '--out', join(dir, 'a-file', 'signer')]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/a-file/);
    expect(r.stderr).not.toMatch(RAW);
  });
});
