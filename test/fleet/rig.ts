import { createHash, randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createMirror } from '../../src/mirror/index.js';
import { generateKeyPair, loadPublicKey } from '../../src/package/index.js';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';
import { tokensFile } from '../mirror/helpers.js';

/**
 * Shared by the fleet tests and bench:fleet: versioned sites whose pages load content-hashed
 * assets named after the version (the skew a rollout must survive), signed packages of them, and
 * a mirror serving a store of such versions.
 */
export const FLEET_TOKEN = 'svc_fleet_test_' + 'f'.repeat(24);
export const PAGES = ['index.html', 'guide.html', 'api/reference.html'];

const hash8 = (s: string | Buffer) => createHash('sha256').update(s).digest('hex').slice(0, 8);

/** A site for `label`: every page names its version and loads /assets/app.<hash>.js and .css (hash of the version's content). */
export async function writeSite(dir: string, label: string, blobBytes = 0): Promise<{ assets: string[] }> {
  const js = `console.log(${JSON.stringify(label)});\n`;
  const css = `body::after { content: ${JSON.stringify(label)}; }\n`;
  const assets = [`assets/app.${hash8(js + label)}.js`, `assets/app.${hash8(css + label)}.css`];
  const files: Record<string, string | Buffer> = { [assets[0]!]: js, [assets[1]!]: css, 'assets/logo.svg': '<svg xmlns="http://www.w3.org/2000/svg"/>\n' };
  for (const p of PAGES) {
    files[p] =
      `<!doctype html><html><head><title>${label} ${p}</title><link rel="stylesheet" href="/${assets[1]}"></head>` +
      `<body><h1 data-version="${label}">${label}</h1><img src="/assets/logo.svg"><script src="/${assets[0]}"></script></body></html>\n`;
  }
  files['404.html'] = `<!doctype html><title>not found (${label})</title>\n`;
  if (blobBytes > 0) files['assets/blob.bin'] = randomBytes(blobBytes);
  for (const [p, data] of Object.entries(files)) {
    await mkdir(join(dir, p, '..'), { recursive: true });
    await writeFile(join(dir, p), data);
  }
  return { assets };
}

export interface Signer {
  keyPath: string;
  pubPath: string;
}
export const makeSigner = (prefix: string): Promise<Signer> => generateKeyPair(prefix);

/** A signed package of a fresh site for `label`. */
export async function sitePackage(root: string, label: string, signer: Signer | null, blobBytes = 0): Promise<string> {
  const site = join(root, 'sites', label);
  await writeSite(site, label, blobBytes);
  const { pkgPath } = await makePackage({ siteDir: site, version: label, outDir: join(root, 'pkgs'), signKey: signer?.keyPath });
  return pkgPath;
}

/** Import into `store` (trusting `signer`), optionally activating. */
export async function addVersion(store: string, pkg: string, signer: Signer | null, activateIt: boolean): Promise<void> {
  await importPackage(pkg, { store, trust: signer ? [await loadPublicKey(signer.pubPath)] : [], allowUnsigned: signer === null, activate: activateIt });
}

/** An in-process mirror (serve --mirror) over `store`. */
export async function startMirror(
  root: string,
  store: string,
  o: { leadMs?: number; port?: number; log?: (l: string) => void } = {},
): Promise<{ url: string; srv: AirlockServer }> {
  const mirror = await createMirror({
    store,
    tokensFile: await tokensFile(join(root, 'mirror-tokens'), [FLEET_TOKEN]),
    log: o.log ?? (() => {}),
    fleetLeadMs: o.leadMs,
  });
  const srv = await createAirlockServer({ store, app: mirror.app, appPrefixes: mirror.appPrefixes, log: () => {}, lease: false });
  const url = (await srv.listen(o.port ?? 0, '127.0.0.1')).replace(/\/$/, '');
  return { url, srv };
}
