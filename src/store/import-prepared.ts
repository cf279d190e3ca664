import { activate } from './activate.js';
import type { ImportOptions, ImportResult } from './add-version.js';
import { importPackage } from './import.js';
import type { ProgressEvent } from './progress.js';
import { buildVariants, type VariantsReport } from './variants/build.js';
import { importVolumes } from './volume-import.js';

/** A package as given: one file, or volumes read in place (found in `dirs` too). */
export type PackageSource = { kind: 'file'; path: string } | { kind: 'volumes'; paths: string[]; dirs: string[] };

/**
 * What preparing a version before any server loads it needs of the server's modules (the HTML
 * transform's pages, the HTML cache): handed in, loaded only when asked for and only after the
 * commit, so a plain import stays small (its peak RSS is what bench:import measures).
 */
export interface Preparers {
  isTransformedPage(path: string): boolean;
  prebuildHtmlCache(store: string, label: string, o: { signal?: AbortSignal }): Promise<unknown>;
}

export interface ImportPreparedOptions extends Omit<ImportOptions, 'activate' | 'willActivate' | 'onProgress'> {
  activate: boolean;
  precompress: boolean;
  prepareHtml: boolean;
  preparers: () => Promise<Preparers>;
  onProgress: (e: ProgressEvent | { phase: 'html' }) => void;
  onVolume?: (index: number, count: number, path: string) => void;
}

export interface ImportPrepared {
  /** The package as the report names it (the first volume's package path for volumes). */
  package: string;
  result: ImportResult;
  variants: VariantsReport | null;
  html: unknown;
  volumes: { count: number; paths: string[] } | null;
}

/**
 * `airlock import`: the version added (all or nothing), then, outside the lock, what was asked
 * for before returning — precompression, the served HTML — and activation last, after whatever
 * preparation. A signal stops the import before its commit (the store stays as it was) or the
 * preparation after it (the version is in, not activated; what was precompressed is kept).
 */
export async function importPrepared(src: PackageSource, o: ImportPreparedOptions): Promise<ImportPrepared> {
  const { store, signal } = o;
  const { activate: activating, precompress, prepareHtml, preparers, onVolume, ...rest } = o;
  const io = { ...rest, willActivate: activating };
  let volumes: { count: number; paths: string[] } | null = null;
  let pkgShown = src.kind === 'file' ? src.path : src.paths[0]!;
  let result: ImportResult;
  if (src.kind === 'file') result = await importPackage(src.path, io);
  else {
    const { volumes: set, ...r } = await importVolumes(src.paths, { ...io, dirs: src.dirs, onVolume });
    result = r;
    volumes = { count: set.paths.length, paths: set.paths };
    pkgShown = set.input.path;
  }
  let variants: VariantsReport | null = null;
  let html: unknown = null;
  // After the commit and outside the lock: the version is already safe and servable.
  const serve = precompress || prepareHtml ? await preparers() : null;
  if (precompress) {
    variants = await buildVariants(store, result.version, {
      signal,
      exclude: serve!.isTransformedPage,
      onProgress: (done, total) => o.onProgress({ phase: 'variants', done, total }),
    });
  }
  if (prepareHtml) {
    o.onProgress({ phase: 'html' });
    html = await serve!.prebuildHtmlCache(store, result.version, { signal });
  }
  if (activating) {
    await activate(store, result.version, { signal });
    o.onProgress({ phase: 'activated', version: result.version });
  }
  result.activated = activating;
  return { package: pkgShown, result, variants, html, volumes };
}
