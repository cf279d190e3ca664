import type { KeyObject } from 'node:crypto';
import { UsageError } from '../errors.js';
import { readPackage } from '../package/reader.js';
import { splitWritten } from '../package/volumes/split-written.js';
import type { SplitResult } from '../package/volumes/write.js';
import { makeDelta, type DeltaSummary } from '../delta/make.js';
import { fetchPackage, type FetchOptions, type FetchSummary } from './fetch.js';
import { formWarnings, packageWarning } from './warnings.js';

/**
 * fetch --base OLD: what the delta needs of OLD is known before the export starts (its site and
 * a version other than the one asked for), so a mismatch is refused then, never after a download.
 */
export async function checkBase(base: string, domain: string, versionLabel: string | undefined): Promise<void> {
  const old = (await readPackage(base)).manifest;
  if (old.domain !== domain)
    throw new UsageError(`--base ${base} is a package of ${old.domain}, not of --domain ${domain}; a delta joins two versions of one site`, {
      subject: '--base',
    });
  if (versionLabel !== undefined && versionLabel === old.version)
    throw new UsageError(`--base ${base} is version ${old.version}, the --version-label asked for; a delta needs two different version labels`, {
      subject: '--base',
    });
}

export interface Carried {
  delta: DeltaSummary | null;
  volumes: SplitResult | null;
  /** Every file written, once each, in order: the package, the full package kept for the next --base, what to carry. */
  written: string[];
}

/**
 * What goes to the isolated side from a fetched package: the delta from `base` (with the full
 * package beside it), or the package itself; split into volumes with `split`.
 */
export async function carryFetched(
  summary: FetchSummary,
  o: { base?: string; outDir: string; signKey?: KeyObject; split?: number; signal?: AbortSignal },
): Promise<Carried> {
  const delta = o.base ? await makeDelta({ oldPkg: o.base, newPkg: summary.package, outDir: o.outDir, signKey: o.signKey, signal: o.signal }) : null;
  const carried = delta ? delta.delta : summary.package;
  const volumes = o.split === undefined ? null : await splitWritten(carried, o.split, o.signKey, o.signal);
  const written = [summary.package, ...(delta ? [delta.full] : []), ...(volumes ? volumes.volumes : [carried])].filter((p, i, a) => a.indexOf(p) === i);
  return { delta, volumes, written };
}

export interface FetchAndCarryOptions extends FetchOptions {
  /** fetch --base OLD: also write the delta from OLD (checkBase first, before any request). */
  base?: string;
  /** fetch --split SIZE: what is carried is written as volumes. */
  split?: number;
  /** The warnings about signatures: the form's before the download, the mirror's package's once written. */
  warn: (line: string) => void;
  /** The package is written (before the warnings about it, the delta and the volumes). */
  onPackaged?: () => void;
}

/** `airlock fetch`: the package fetched and written, then what carries it to the isolated side. */
export async function fetchAndCarry(o: FetchAndCarryOptions): Promise<{ summary: FetchSummary } & Carried> {
  const { base, split, warn, onPackaged, ...fetchOptions } = o;
  const trust = o.trust ?? [];
  const summary = await fetchPackage({
    ...fetchOptions,
    onEvent: formWarnings(o.onEvent ?? (() => {}), warn, { signed: Boolean(o.signKey), trust: trust.length > 0 }),
  });
  onPackaged?.();
  const warning = packageWarning(summary);
  if (warning !== null) warn(warning);
  return { summary, ...(await carryFetched(summary, { base, outDir: o.outDir, signKey: o.signKey, split, signal: o.signal })) };
}
