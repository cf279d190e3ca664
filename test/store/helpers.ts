/**
 * Builds real .airlock packages for the store tests (the package format), independent of
 * src/package's writer so a writer bug cannot hide a store bug: node-tar for the export archive
 * and the package tar, node:crypto Ed25519 for the signature.
 */
import { createHash, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { walk } from '../helpers/walk.js';
import * as tar from 'tar';

export interface TestKey {
  priv: KeyObject;
  pub: KeyObject;
  pubPath: string;
}

export async function makeTempDir(prefix = 'airlock-store-test-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export async function makeKey(dir: string, name = 'signer'): Promise<TestKey> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const pubPath = join(dir, `${name}.pub`);
  await writeFile(pubPath, publicKey.export({ type: 'spki', format: 'pem' }));
  return { priv: privateKey, pub: publicKey, pubPath };
}

/** A small site: index.html (big enough to precompress), a page, css, and a binary image. */
export function sampleSite(tag: string, extraFiles = 0): Record<string, string | Buffer> {
  const files: Record<string, string | Buffer> = {
    'index.html': `<!doctype html><title>${tag}</title>` + '<p>Welcome to the documentation.</p>\n'.repeat(80),
    'guide/start.html': `<h1>Start ${tag}</h1>`,
    '_next/static/app.abc123.css': 'body { color: #333; }\n'.repeat(100),
    'img/logo.png': Buffer.from(Array.from({ length: 3000 }, (_, i) => (i * 7919) % 251)),
  };
  for (let i = 0; i < extraFiles; i++) files[`pages/p${i}.html`] = `<h1>page ${i} ${tag}</h1>` + 'x'.repeat(2000 + i);
  return files;
}

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

export interface BuildOptions {
  version: string;
  files: Record<string, string | Buffer>;
  key?: TestKey;
  domain?: string;
  /** Corrupt the manifest's digest of the first file (a package that must be refused). */
  lie?: boolean;
  /** Change the manifest before it is signed (a signed package whose archive does not match it). */
  tamper?: (manifest: TestManifest) => void;
  /** Package file name (default `<version>.airlock`). */
  name?: string;
}

export interface TestManifest {
  archive: { size: number; sha256: string };
  files: { path: string; size: number; sha256: string }[];
}

/** Write `<dir>/<version>.airlock` and return its path. */
export async function buildPackage(dir: string, o: BuildOptions): Promise<string> {
  const work = await mkdtemp(join(dir, 'build-'));
  const site = join(work, 'site');
  for (const [path, body] of Object.entries(o.files)) {
    await mkdir(join(site, path, '..'), { recursive: true });
    await writeFile(join(site, path), body);
  }
  const paths = (await walk(site)).sort((a, b) => (Buffer.from(a) < Buffer.from(b) ? -1 : 1));
  const pkgDir = join(work, 'pkg');
  await mkdir(pkgDir);
  const bundle = join(pkgDir, 'bundle.tar.gz');
  await tar.c({ file: bundle, cwd: site, gzip: true, portable: true }, paths);
  const bundleBytes = await readFile(bundle);
  const files = await Promise.all(
    paths.map(async (p) => {
      const body = await readFile(join(site, p));
      return { path: p, size: body.length, sha256: sha256(body) };
    }),
  );
  if (o.lie && files[0]) files[0].sha256 = sha256('not the content');
  const manifest = {
    format: 'airlock-package/1',
    domain: o.domain ?? 'docs.example.com',
    version: o.version,
    jobId: null,
    createdAt: new Date().toISOString(),
    pageCount: paths.filter((p) => p.endsWith('.html')).length,
    archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: bundleBytes.length, sha256: sha256(bundleBytes) },
    files,
  };
  o.tamper?.(manifest);
  const manifestBytes = Buffer.from(JSON.stringify(manifest, null, 2) + '\n');
  await writeFile(join(pkgDir, 'airlock.json'), manifestBytes);
  const members = ['airlock.json'];
  if (o.key) {
    await writeFile(join(pkgDir, 'airlock.json.sig'), sign(null, manifestBytes, o.key.priv));
    members.push('airlock.json.sig');
  }
  members.push('bundle.tar.gz');
  const out = join(dir, o.name ?? `${o.version}${o.lie ? '-lie' : ''}.airlock`);
  await tar.c({ file: out, cwd: pkgDir, portable: true }, members);
  await rm(work, { recursive: true, force: true });
  return out;
}

/** What a refusal may change in a store: it appends one line to the audit log (trust policy, several signers). */
export const AUDIT_FILES = ['audit.log', 'audit.head'];

/**
 * A digest of a whole tree (paths, kinds, contents) to prove "byte-for-byte unchanged". The
 * store's audit log and its head (at the root) are left out unless `all`: a refusal appends one
 * line there; assert that line with expectRefusalLogged.
 */
export async function treeDigest(root: string, o: { all?: boolean } = {}): Promise<string> {
  const h = createHash('sha256');
  const visit = async (dir: string): Promise<void> => {
    const entries = (await readdir(dir, { withFileTypes: true }).catch(() => [])).sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const p = join(dir, e.name);
      if (!o.all && dir === root && AUDIT_FILES.includes(e.name)) continue;
      h.update(`${relative(root, p)}\0${e.isDirectory() ? 'd' : 'f'}\0`);
      if (e.isDirectory()) await visit(p);
      else h.update(await readFile(p));
    }
  };
  await stat(root).then(
    () => visit(root),
    () => h.update('(absent)'),
  );
  return h.digest('hex');
}

/** A copier of stores: each call copies `pristine` to a new folder under `dir` (s1, s2, …) and gives its path. */
export function storeCopies(): (dir: string, pristine: string) => Promise<string> {
  let n = 0;
  return async (dir, pristine) => {
    const store = join(dir, `s${++n}`);
    await cp(pristine, store, { recursive: true });
    return store;
  };
}
