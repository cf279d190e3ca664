import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { StoreError } from '../errors.js';
import { versionPaths } from './paths.js';

/** version.json: what the store knows about a version besides its manifest (docs/DESIGN.md). */
export const VersionMetaSchema = z.object({
  label: z.string(),
  domain: z.string(),
  importedAt: z.string(),
  packageSha256: z.string().regex(/^[0-9a-f]{64}$/),
  archive: z.object({
    name: z.string(),
    format: z.enum(['tar.gz', 'tar', 'zip']),
    offset: z.number().int().nonnegative(),
    size: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  signer: z.string().nullable(),
  pageCount: z.number().nullable(),
  fileCount: z.number().int().nonnegative(),
  totalBytes: z.number().int().nonnegative(),
}).passthrough();
export type VersionMeta = z.infer<typeof VersionMetaSchema>;

export async function readJsonFile<T>(path: string, schema: z.ZodType<T>, what: string): Promise<T> {
  let json: unknown;
  try {
    json = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw err;
    throw new StoreError('AIRLOCK_BAD_VERSION', `${what} ${path} is not valid JSON`, { subject: path });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw new StoreError('AIRLOCK_BAD_VERSION', `${what} ${path} has an unexpected shape: ${parsed.error.issues[0]?.message ?? ''}`, { subject: path });
  return parsed.data;
}

export function readMeta(versionDir: string): Promise<VersionMeta> {
  return readJsonFile(versionPaths(versionDir).meta, VersionMetaSchema, 'version metadata');
}
