import { existsSync } from 'node:fs';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchPackage, type FetchEvent } from '../../src/fetch/index.js';
import { generateKeyPair, loadPrivateKey, loadPublicKey } from '../../src/package/index.js';
import { importPackage } from '../../src/store/index.js';
import { ServiceClient } from '../../src/upstream/index.js';
import { airlockAsync } from '../helpers/bin.js';
import { makePackage } from '../helpers/make-package.js';
import { mirrorRig, TOKEN, type MirrorRig } from '../mirror/rig.js';

/**
 * Fetch from an airlock mirror (the package form): a signature is reported as verified only when
 * --trust checked it, and the output name (the mirror's version) is checked before the download.
 */
let r: MirrorRig;
let keys: { keyPath: string; pubPath: string; fingerprint: string };
beforeAll(async () => {
  r = await mirrorRig(); // docs.example.com v1, unsigned
  keys = await generateKeyPair(join(r.dir, 'release'));
  const { pkgPath } = await makePackage({
    domain: 'signed.example.com',
    version: 's1',
    signKey: await loadPrivateKey(keys.keyPath),
    outDir: join(r.dir, 'signed-pkgs'),
  });
  await importPackage(pkgPath, { store: r.store, trust: [await loadPublicKey(keys.pubPath)], activate: false });
}, 30_000);
afterAll(async () => r.close());

let n = 0;
async function fetchFrom(domain: string, o: { trust?: boolean; versionLabel?: string; out?: string } = {}) {
  const out = o.out ?? join(r.dir, `out-${n++}`);
  const events: FetchEvent[] = [];
  const client = new ServiceClient({ baseUrl: r.url, adminKey: TOKEN, retry: { retries: 1, baseMs: 1, maxMs: 2 } });
  const run = fetchPackage({
    client,
    domain,
    outDir: out,
    versionLabel: o.versionLabel,
    trust: o.trust ? [await loadPublicKey(keys.pubPath)] : [],
    pollIntervalMs: 20,
    onEvent: (e) => events.push(e),
  });
  return {
    out,
    events,
    result: await run.then(
      (s) => ({ ok: true as const, s }),
      (err: unknown) => ({ ok: false as const, err: err as Error & { code?: string; exitCode?: number } }),
    ),
  };
}

describe('fetch from a mirror: what the signature state says', () => {
  it('a signed package without --trust: signed false, signature "unverified" (nobody checked it)', async () => {
    const { result } = await fetchFrom('signed.example.com');
    expect(result.ok && result.s).toMatchObject({ form: 'package', version: 's1', signed: false, signature: 'unverified', signer: null });
  });

  it('a signed package with --trust: signed true, signature "verified", signer named', async () => {
    const { result } = await fetchFrom('signed.example.com', { trust: true });
    expect(result.ok && result.s).toMatchObject({ signed: true, signature: 'verified', signer: keys.fingerprint });
  });

  it('an unsigned package: signed false, signature "none"', async () => {
    const { result } = await fetchFrom('docs.example.com');
    expect(result.ok && result.s).toMatchObject({ signed: false, signature: 'none', version: 'v1' });
  });
});

describe('fetch from a mirror: checks before the download', () => {
  it('an existing <domain>-<mirror version>.airlock is refused before any byte is downloaded, and kept', async () => {
    const out = join(r.dir, 'exists');
    await fetchFrom('docs.example.com', { out });
    const path = join(out, 'docs.example.com-v1.airlock');
    await writeFile(path, 'an older package');
    const { events, result } = await fetchFrom('docs.example.com', { out });
    expect(result.ok).toBe(false);
    expect(!result.ok && result.err).toMatchObject({ code: 'AIRLOCK_EXISTS', exitCode: 2 });
    expect(events.filter((e) => e.type === 'download')).toEqual([]);
    expect(await readdir(out)).toEqual(['docs.example.com-v1.airlock']);
    expect(await readFile(path, 'utf8')).toBe('an older package');
  });

  it("--version-label other than the mirror's version: usage error (2) before the download, no folder created", async () => {
    const { out, events, result } = await fetchFrom('docs.example.com', { versionLabel: 'v7' });
    expect(!result.ok && result.err).toMatchObject({ code: 'AIRLOCK_USAGE', exitCode: 2 });
    expect(result.ok || result.err.message).toContain("the mirror's package is version v1");
    expect(events.filter((e) => e.type === 'download')).toEqual([]);
    expect(existsSync(out)).toBe(false);
  });

  it('the CLI says so: an unchecked signature is a warning and "unverified" in --json', async () => {
    const run = await airlockAsync(['fetch', '--domain', 'signed.example.com', '--api-url', r.url, '--out', join(r.dir, 'cli'), '--json'], {
      env: { AIRLOCK_ADMIN_KEY: TOKEN },
    });
    expect(run.status, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ signed: false, signature: 'unverified', form: 'package' });
    expect(run.stderr).toContain("warning: the mirror's package carries a signature that was NOT checked (no --trust)");
    const trusted = await airlockAsync(
      ['fetch', '--domain', 'signed.example.com', '--api-url', r.url, '--out', join(r.dir, 'cli2'), '--trust', keys.pubPath, '--json'],
      { env: { AIRLOCK_ADMIN_KEY: TOKEN } },
    );
    expect(trusted.status, trusted.stderr).toBe(0);
    expect(JSON.parse(trusted.stdout)).toMatchObject({ signed: true, signature: 'verified', signer: keys.fingerprint });
    expect(trusted.stderr).not.toContain('NOT checked');
  });
});
