import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock } from '../helpers/bin.js';
import { FIXTURE_SITE, makeArchive } from '../helpers/make-package.js';

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
  const packed = airlock(['pack', join(dir, 'site.tgz'), '--domain', 'docs.example.com', '--version-label', 'v1', '--sign-key', join(dir, 'k.key'), '--out', dir]);
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

export { RAW };
