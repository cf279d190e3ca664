import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, randomBytes } from 'node:crypto';
import { cp, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { makeDelta } from '../../src/delta/index.js';
import { readPackage } from '../../src/package/index.js';
import { importPackage } from '../../src/store/index.js';
import { signLink } from '../../src/mirror/index.js';
import { FIXTURE_SITE, makePackage } from '../helpers/make-package.js';
import { mirrorRig, type MirrorRig } from './rig.js';

/**
 * A version imported from a delta keeps no package file; the mirror builds it when
 * first asked for and hands out exactly the full package `airlock delta` wrote beside the delta.
 */
let r: MirrorRig;
let full: Buffer;
const jobs = '/v1/static-export/jobs';
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

async function deltaVersions(labels: [string, string]): Promise<string> {
  const sites = labels.map((l) => join(r.dir, `dsite-${l}`));
  for (const s of sites) await cp(FIXTURE_SITE, s, { recursive: true });
  const page = join(sites[1]!, 'index.html');
  await writeFile(page, (await readFile(page, 'utf8')).replace('</body>', '<p>edited for the next release</p></body>'));
  const [base, target] = await Promise.all(labels.map((l, i) => makePackage({ siteDir: sites[i]!, version: l, outDir: join(r.dir, `dpkgs-${l}`) })));
  const d = await makeDelta({ oldPkg: base!.pkgPath, newPkg: target!.pkgPath, outDir: join(r.dir, `dout-${labels[1]}`) });
  await importPackage(base!.pkgPath, { store: r.store, trust: [], allowUnsigned: true });
  await importPackage(d.delta, { store: r.store, trust: [], allowUnsigned: true });
  return d.full;
}

const secret = randomBytes(32);
let secretDir: string;
beforeAll(async () => {
  secretDir = await mkdtemp(join(tmpdir(), 'airlock-mirror-secret-'));
  await writeFile(join(secretDir, 'secret'), secret, { mode: 0o600 });
  r = await mirrorRig(0, { secretFile: join(secretDir, 'secret') });
  full = await readFile(await deltaVersions(['d1', 'd2']));
});
afterAll(async () => {
  await r.close();
  await rm(secretDir, { recursive: true, force: true });
});

describe('mirror: a version imported from a delta', () => {
  it("has no package file until asked; the bundle link names the full package's sha256 and both links serve its exact bytes", async () => {
    const dir = join(r.store, 'versions', 'd2');
    expect(existsSync(join(dir, 'package.airlock'))).toBe(false);
    const job = await r.api(jobs, { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com', version: 'd2' }) });
    expect(job.status).toBe(202);
    const b = (await (await r.api(`${jobs}/mv_d2/bundle`, { method: 'POST' })).json()) as {
      bundleUrl: string;
      packageUrl: string;
      packageSha256: string;
      sizeBytes: number;
    };
    expect(b.packageSha256).toBe(sha(full));
    const pkg = Buffer.from(await (await fetch(b.packageUrl)).arrayBuffer());
    expect(pkg.equals(full)).toBe(true);
    const layout = await readPackage(join(dir, 'package.airlock')); // now kept in the version folder
    const tar = full.subarray(layout.archive.offset, layout.archive.offset + layout.archive.size);
    const res = await fetch(b.bundleUrl, { headers: { range: 'bytes=0-' } });
    expect(res.headers.get('etag')).toBe(`"${sha(tar)}"`);
    expect(Buffer.from(await res.arrayBuffer()).equals(tar)).toBe(true);
    expect(b.sizeBytes).toBe(tar.length);
    expect((await readdir(dir)).filter((n) => n.endsWith('.tmp'))).toEqual([]);
  });

  it('a site file changed in the store after the import: the bundle call and a signed object link answer 503 naming nothing inside; no package file, no temporary left', async () => {
    await deltaVersions(['e1', 'e2']);
    const dir = join(r.store, 'versions', 'e2');
    await writeFile(join(dir, 'site', 'index.html'), 'tampered after the import');
    const bundle = await r.api(`${jobs}/mv_e2/bundle`, { method: 'POST' });
    expect(bundle.status).toBe(503);
    const body = (await bundle.json()) as { error: string };
    expect(body.error).toMatch(/cannot be prepared now/);
    expect(body.error).not.toContain(r.store);
    expect(existsSync(join(dir, 'package.airlock'))).toBe(false);
    expect((await readdir(dir)).filter((n) => n.startsWith('.package'))).toEqual([]);
    // A link signed earlier (or by another worker) reaches the object endpoint: the same refusal, S3-shaped.
    const expires = Math.floor(Date.now() / 1000) + 600;
    const object = await fetch(
      `${r.url}/_airlock/objects/e2/package.airlock?${signLink(secret, { label: 'e2', name: 'package.airlock', form: 'airlock', expires })}`,
    );
    expect(object.status).toBe(503);
    expect(await object.text()).toMatch(/<Code>ServiceUnavailable<\/Code>/);
    expect(existsSync(join(dir, 'package.airlock'))).toBe(false);
  });
});
