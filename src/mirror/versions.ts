import { join } from 'node:path';
import { z } from 'zod';
import { VERSION_LABEL } from '../package/index.js';
import { listVersions, storePaths, versionPaths } from '../store/index.js';
import { readRegularFile } from '../util/fsx.js';

/**
 * What the mirror needs of a stored version, read from its version.json (small, immutable once
 * the version exists: a version folder appears whole by rename and is never modified).
 */
const META_MAX_BYTES = 1024 * 1024;

const MetaSchema = z.looseObject({
  label: z.string(),
  domain: z.string(),
  importedAt: z.string(),
  packageSha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .nullable(), // null: imported from a delta (packages.ts)
  archive: z.looseObject({
    name: z.string().regex(/^bundle\.(tar\.gz|tgz|tar|zip)$/),
    offset: z.number().int().nonnegative(),
    size: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  pageCount: z.number().nullable(),
});
export type MirrorVersion = z.infer<typeof MetaSchema> & { pkgPath: string };

/** The version `label`, or null when the store has no such (complete) version. Never builds a path from an unchecked label. */
export async function readVersion(store: string, label: string): Promise<MirrorVersion | null> {
  if (!VERSION_LABEL.test(label)) return null;
  const p = versionPaths(join(storePaths(store).versions, label));
  let json: unknown;
  try {
    // Bounded, regular files only, opened non-blocking: a FIFO or a device in the store is no
    // version, never a request that waits forever or reads without end.
    json = JSON.parse((await readRegularFile(p.meta, { maxBytes: META_MAX_BYTES, refuse: (why) => new Error(why) })).toString('utf8'));
  } catch {
    return null;
  }
  const meta = MetaSchema.safeParse(json);
  if (!meta.success || meta.data.label !== label) return null;
  return { ...meta.data, pkgPath: p.pkg };
}

/**
 * The version a `POST /jobs {domain, version?}` means: the named one (of that domain), else the
 * active version when it is the domain's, else the domain's newest import.
 */
export async function versionForDomain(store: string, domain: string, version?: string): Promise<MirrorVersion | null> {
  if (version !== undefined) {
    const v = await readVersion(store, version);
    return v && v.domain === domain ? v : null;
  }
  const all = (await listVersions(store)).filter((v) => v.domain === domain);
  const pick = all.find((v) => v.active) ?? [...all].sort((a, b) => (a.importedAt < b.importedAt ? 1 : -1))[0];
  return pick ? readVersion(store, pick.version) : null;
}
