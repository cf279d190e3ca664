import { fetchBundle, type BundleOptions } from '../fetch/bundle.js';
import { importPackage } from './import.js';

/**
 * A bundle link's content added to the store: the fetch side downloads it (resumable, under
 * S/downloads/) and makes a package of a raw export archive; the store's import verifies and
 * commits it, all-or-nothing. Used by a values file's staticExport.bundleUrl and by a fleet
 * follower; the store may use fetch, never the other way round.
 */
export interface InstallOptions extends BundleOptions {
  activate: boolean;
  /** Freshness rules to override (importPackage's allowDowngrade; recorded in the audit log). */
  allowDowngrade?: readonly string[];
}

export interface Installed {
  version: string;
  status: 'imported' | 'unchanged';
  form: 'package' | 'archive';
  bytes: number;
}

export function installBundle(o: InstallOptions): Promise<Installed> {
  return fetchBundle(o, (pkg, t) => importPackage(pkg, { store: o.store, ...t, activate: o.activate, signal: o.signal, allowDowngrade: o.allowDowngrade }));
}
