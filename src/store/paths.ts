import { join, resolve } from 'node:path';
import { StoreError, UsageError } from '../errors.js';
import { VERSION_LABEL } from '../package/label.js';

/** The store directory: --store, then AIRLOCK_STORE, then ./airlock-store. */
export function resolveStore(flag: string | undefined, env: NodeJS.ProcessEnv, cwd = process.cwd()): string {
  // An empty value is a mistake (an unset shell variable), never a request for the default.
  if (flag === '')
    throw new UsageError('--store is empty; give the store folder (or leave the flag out for $AIRLOCK_STORE, else ./airlock-store)', { subject: '--store' });
  if (flag === undefined && env.AIRLOCK_STORE === '')
    throw new UsageError('AIRLOCK_STORE is set but empty; give the store folder (or unset it for ./airlock-store)', { subject: 'AIRLOCK_STORE' });
  const chosen = flag ?? env.AIRLOCK_STORE ?? 'airlock-store';
  return resolve(cwd, chosen);
}

/** Every path of the store layout (docs/design.md "src/store") in one place. */
export function storePaths(store: string) {
  return {
    root: store,
    state: join(store, 'state.json'),
    lock: join(store, 'lock'),
    versions: join(store, 'versions'),
    staging: join(store, 'staging'),
    trustedKeys: join(store, 'trusted-keys'),
    leases: join(store, 'leases'),
  };
}

/** The store's trust records: its policy, the chain of every policy it accepted, the order it has seen per domain. */
export function trustPaths(store: string) {
  const dir = join(store, 'trust');
  return { dir, policy: join(dir, 'policy.json'), chain: join(dir, 'chain'), seen: join(dir, 'seen.json'), staged: join(dir, 'staged.json') };
}

/** Paths inside one version folder. */
export function versionPaths(dir: string) {
  return {
    dir,
    pkg: join(dir, 'package.airlock'),
    manifest: join(dir, 'airlock.json'),
    meta: join(dir, 'version.json'),
    site: join(dir, 'site'),
    variants: join(dir, 'variants'),
    variantsIndex: join(dir, 'variants', 'index.json'),
    /** Vendoring: the package's vendored files, `vendor/<sha256>.<ext>` (each checked against the manifest). */
    vendor: join(dir, 'vendor'),
    /** What serve prepares for the version: its transformed pages and its search index. */
    html: join(dir, 'html'),
    search: join(dir, 'search'),
  };
}

/** Does `s` follow the contract's label grammar (so it can name a folder)? */
export function isLabel(s: unknown): s is string {
  return typeof s === 'string' && VERSION_LABEL.test(s);
}

/**
 * A label becomes a folder name, so it is checked before any path is built from it: the
 * contract's label grammar has no "/", no leading "." and no "..", so no traversal is possible.
 */
export function checkLabel(label: string): string {
  if (!isLabel(label)) {
    throw new StoreError('AIRLOCK_BAD_LABEL', `invalid version label ${JSON.stringify(label)}: must match ${VERSION_LABEL.source}`, { subject: label }, 2);
  }
  return label;
}

export function versionDir(store: string, label: string): string {
  return join(storePaths(store).versions, checkLabel(label));
}

/**
 * Every folder of a site, `root` first: the parents of its files (computed from the manifest, not
 * walked: 115 sequential readdir trips for the 3,000-page benchmark site).
 */
export function siteFolders(root: string, files: readonly { path: string }[]): string[] {
  const dirs = new Set<string>();
  for (const { path } of files) for (let i = path.indexOf('/'); i > 0; i = path.indexOf('/', i + 1)) dirs.add(path.slice(0, i));
  return [root, ...[...dirs].map((d) => join(root, d))];
}
