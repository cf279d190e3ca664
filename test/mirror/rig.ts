import { randomBytes } from 'node:crypto';
import { cp, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMirror } from '../../src/mirror/index.js';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { importPackage } from '../../src/store/index.js';
import { FIXTURE_SITE, makePackage } from '../helpers/make-package.js';
import { tempDir, tokensFile } from './helpers.js';

/** An in-process mirror over a temp store holding `v1` (the fixture site plus a random blob). */
export const TOKEN = 'svc_mirror_test_' + 'k'.repeat(24);
export interface MirrorRig {
  dir: string;
  store: string;
  url: string;
  srv: AirlockServer;
  clock: { now: number };
  addVersion(label: string, blobBytes?: number): Promise<string>;
  api(path: string, init?: RequestInit & { token?: string | null }): Promise<Response>;
  close(): Promise<void>;
}

/** `secretFile`: the mirror's link secret (default: random per rig), for tests that sign links themselves. */
export async function mirrorRig(blobBytes = 0, o: { secretFile?: string } = {}): Promise<MirrorRig> {
  const t = await tempDir('airlock-mirror-');
  const store = join(t.dir, 'store');
  const addVersion = async (label: string, bytes = blobBytes) => {
    const site = join(t.dir, `site-${label}`);
    await cp(FIXTURE_SITE, site, { recursive: true });
    await mkdir(join(site, 'assets'), { recursive: true });
    // Random bytes: the archive stays as big as the blob (no compression), so downloads take time.
    await writeFile(join(site, 'assets', 'blob.bin'), randomBytes(bytes));
    const { pkgPath } = await makePackage({ siteDir: site, version: label, outDir: join(t.dir, 'pkgs') });
    await importPackage(pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
    return pkgPath;
  };
  await addVersion('v1');
  const clock = { now: Date.now() };
  const mirror = await createMirror({
    store,
    tokensFile: await tokensFile(join(t.dir, 'tokens'), [TOKEN]),
    secretFile: o.secretFile,
    log: () => {},
    now: () => clock.now,
  });
  const srv = await createAirlockServer({ store, app: mirror.app, appPrefixes: mirror.appPrefixes, log: () => {}, pollMs: 50 });
  const url = (await srv.listen(0, '127.0.0.1')).replace(/\/$/, '');
  return {
    dir: t.dir,
    store,
    url,
    srv,
    clock,
    addVersion,
    api: (path, init = {}) => {
      const token = init.token === undefined ? TOKEN : init.token;
      const headers: Record<string, string> = { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) };
      return fetch(url + path, { ...init, headers: { ...headers, ...(init.headers as Record<string, string> | undefined) } });
    },
    async close() {
      await srv.close(100);
      await t.cleanup();
    },
  };
}
