import { UsageError } from '../errors.js';
import type { Values } from './schema.js';

/** The serve flags this module merges with a values file (strings as parseArgs gives them). */
export interface ServeFlags {
  store?: string; version?: string; deployment?: string; enable?: string[]; disable?: string[];
  port?: string; host?: string; mirror?: boolean; 'mirror-tokens'?: string;
}

export interface StaticExportSettings {
  bundleUrl: string; domain?: string; trust: string[]; allowUnsigned: boolean;
}
export interface MirrorSettings { tokensFile: string; secretFile?: string; ttlSeconds?: number; publicUrl?: string }

/** What serve runs with: flag strings (validated later by serve's own parsers) after the merge. */
export interface ServeSettings {
  store?: string; version?: string; deployment?: string; enable: string[]; disable: string[];
  port?: string; host?: string;
  staticExport: StaticExportSettings | null;
  mirror: MirrorSettings | null;
}

const names = (list: string[] | undefined) => (list ?? []).flatMap((s) => s.split(',')).map((s) => s.trim()).filter(Boolean);

/**
 * Flags given on the command line win over the values file (pure): per key, and per feature for
 * --enable/--disable (a flag naming a feature replaces the values file's word on it).
 */
export function mergeSettings(flags: ServeFlags, v: Values = {}): ServeSettings {
  const flagEnable = names(flags.enable);
  const flagDisable = names(flags.disable);
  const byFlag = new Set([...flagEnable, ...flagDisable]);
  const fromValues = Object.entries(v.features ?? {}).filter(([f, on]) => on !== undefined && !byFlag.has(f));
  const se = v.staticExport;
  const useBundle = se?.enabled !== false && se?.bundleUrl !== undefined;
  const mirrorOn = flags.mirror === true || v.mirror?.enabled === true;
  const tokensFile = flags['mirror-tokens'] ?? v.mirror?.tokensFile;
  if (mirrorOn && tokensFile === undefined) {
    // Fail closed: a mirror without tokens would hand out the whole store.
    throw new UsageError('--mirror needs --mirror-tokens FILE (or mirror.tokensFile in the values file): a file of sha256:<hex> token hashes, see docs/mirror.md', { subject: '--mirror-tokens' });
  }
  return {
    store: flags.store ?? v.store,
    version: flags.version ?? v.staticExport?.version,
    deployment: flags.deployment ?? v.deployment?.type,
    enable: [...flagEnable, ...fromValues.filter(([, on]) => on).map(([f]) => f)],
    disable: [...flagDisable, ...fromValues.filter(([, on]) => !on).map(([f]) => f)],
    port: flags.port ?? (v.port === undefined ? undefined : String(v.port)),
    host: flags.host ?? v.host,
    staticExport: useBundle ? { bundleUrl: se.bundleUrl!, domain: se.domain, trust: se.trust ?? [], allowUnsigned: se.allowUnsigned ?? false } : null,
    mirror: mirrorOn ? { tokensFile: tokensFile!, secretFile: v.mirror?.secretFile, ttlSeconds: v.mirror?.linkTtlSeconds, publicUrl: v.mirror?.publicUrl } : null,
  };
}
