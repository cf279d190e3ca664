import { readFile } from 'node:fs/promises';
import { MalformedError } from '../errors.js';
import { ManifestSchema, type Manifest } from '../package/index.js';
import { requireVersion } from './activate.js';
import { readMeta, type VersionMeta } from './meta.js';
import { versionDir, versionPaths } from './paths.js';
import { readVariantsIndex, type VariantEntry } from './variants/index-file.js';

export interface LoadedVersion {
  label: string;
  dir: string;
  siteDir: string;
  manifest: Manifest;
  meta: VersionMeta;
  /** Finished precompressed variants by content digest (sizes in bytes); files at variantPath(). */
  variants: Map<string, VariantEntry>;
  variantPath(sha256: string, enc: 'br' | 'gz'): string;
}

/** Everything a server needs to index a version, read once (never from a request path). */
export async function loadVersion(store: string, label: string): Promise<LoadedVersion> {
  await requireVersion(store, label);
  const dir = versionDir(store, label);
  const p = versionPaths(dir);
  const meta = await readMeta(dir);
  let json: unknown;
  try {
    json = JSON.parse(await readFile(p.manifest, 'utf8'));
  } catch {
    json = undefined;
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) throw new MalformedError('AIRLOCK_BAD_VERSION', `manifest of version ${label} (${p.manifest}) is damaged`, { subject: p.manifest });
  const variants = await readVariantsIndex(p.variantsIndex);
  return {
    label, dir, siteDir: p.site, manifest: parsed.data, meta, variants,
    variantPath: (sha256, enc) => `${p.variants}/${sha256}.${enc}`,
  };
}
