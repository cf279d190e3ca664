import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { EXIT, StoreError } from '../errors.js';
import { ManifestSchema, parseManifest, type Manifest } from '../package/index.js';
import { isLabel, versionPaths } from './paths.js';

/** version.json: what the store knows about a version besides its manifest (docs/DESIGN.md). */
/** Text we print (list): our own writer never puts control characters there. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const Printable = z.string().max(1024).regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'control characters');
export const VersionMetaSchema = z.object({
  label: z.string(),
  domain: Printable,
  importedAt: z.string().datetime({ offset: true }),
  /** null for a version imported from a delta: it has no package file until one is built (rebuilt-package.ts). */
  packageSha256: z.string().regex(/^[0-9a-f]{64}$/).nullable(),
  archive: z.object({
    name: z.string(),
    format: z.enum(['tar.gz', 'tar', 'zip']),
    offset: z.number().int().nonnegative(),
    size: z.number().int().nonnegative(),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
  }),
  signer: Printable.nullable(),
  pageCount: z.number().nullable(),
  fileCount: z.number().int().nonnegative(),
  totalBytes: z.number().int().nonnegative(),
}).passthrough();
export type VersionMeta = z.infer<typeof VersionMetaSchema>;

/** The store's own small files (state.json, version.json, leases) hold a few hundred bytes. */
export const SMALL_JSON_BYTES = 1024 * 1024;

export interface JsonFileOptions { maxBytes?: number; code?: string }

/**
 * Read a JSON file of the store, bounded BEFORE it is read, and check its shape. A store file
 * that is damaged or edited by hand into something else is a configuration problem (exit 2)
 * named by its path; ENOENT passes through untouched for callers that allow a missing file.
 */
export async function readJsonFile<T>(path: string, schema: z.ZodType<T>, what: string, o: JsonFileOptions = {}): Promise<T> {
  const max = o.maxBytes ?? SMALL_JSON_BYTES;
  const damaged = (why: string) => new StoreError(o.code ?? 'AIRLOCK_BAD_VERSION', `${what} ${path} ${why}; the store file was damaged or edited by hand (restore it, or remove what it belongs to)`, { subject: path }, EXIT.USAGE);
  const fh = await open(path, 'r');
  let text: string;
  try {
    const size = (await fh.stat()).size;
    if (size > max) throw damaged(`is ${size} bytes (at most ${max} expected)`);
    text = await fh.readFile('utf8');
    if (text.length > max) throw damaged(`grew past ${max} bytes while being read`);
  } catch (err) {
    if (err instanceof StoreError) throw err;
    if ((err as NodeJS.ErrnoException).code === 'EISDIR') throw damaged('is a folder');
    throw err;
  } finally {
    await fh.close();
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw damaged('is not valid JSON');
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw damaged(`has an unexpected shape (${parsed.error.issues[0]?.path.join('.') || 'top level'}: ${parsed.error.issues[0]?.message ?? ''})`);
  return parsed.data;
}

/** version.json of the version folder `dir`; its label must be the folder's name. */
export async function readMeta(versionDir: string): Promise<VersionMeta> {
  const path = versionPaths(versionDir).meta;
  const meta = await readJsonFile(path, VersionMetaSchema, 'version metadata');
  const folder = basename(versionDir);
  if (meta.label !== folder || !isLabel(meta.label)) {
    throw new StoreError('AIRLOCK_BAD_VERSION', `version metadata ${path} names the version ${JSON.stringify(meta.label)} but sits in folder ${folder}; the store file was damaged or edited by hand`, { subject: path }, EXIT.USAGE);
  }
  return meta;
}

/** The size bound of src/package's reader (MAX_MANIFEST_BYTES): a stored manifest is one it read. */
const MANIFEST_BYTES = 128 * 1024 * 1024;

/** airlock.json of the version folder `dir` (the exact manifest bytes of the imported package). */
export async function readStoredManifest(versionDir: string): Promise<Manifest> {
  const path = versionPaths(versionDir).manifest;
  try {
    return await readJsonFile(path, ManifestSchema, 'manifest', { maxBytes: MANIFEST_BYTES });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    throw new StoreError('AIRLOCK_BAD_VERSION', `manifest ${path} is missing; the version folder was damaged or edited by hand`, { subject: path }, EXIT.USAGE);
  }
}

/** The stored manifest's exact bytes and their parse, bounded before it is read as readStoredManifest is. */
export async function readStoredManifestBytes(versionDir: string): Promise<{ bytes: Buffer; manifest: Manifest }> {
  const bytes = await readStoredManifestRaw(versionDir);
  return { bytes, manifest: parseManifest(bytes, versionPaths(versionDir).manifest) };
}

/** The stored manifest's exact bytes, bounded before they are read (ENOENT passes through). */
export async function readStoredManifestRaw(versionDir: string): Promise<Buffer> {
  const path = versionPaths(versionDir).manifest;
  const fh = await open(path, 'r');
  try {
    const size = (await fh.stat()).size;
    if (size > MANIFEST_BYTES) throw new StoreError('AIRLOCK_BAD_VERSION', `manifest ${path} is ${size} bytes (at most ${MANIFEST_BYTES} expected); the store file was damaged or edited by hand`, { subject: path }, EXIT.USAGE);
    const bytes = await fh.readFile();
    if (bytes.length > MANIFEST_BYTES) throw new StoreError('AIRLOCK_BAD_VERSION', `manifest ${path} grew past ${MANIFEST_BYTES} bytes while being read; the store file was damaged or edited by hand`, { subject: path }, EXIT.USAGE);
    return bytes;
  } finally {
    await fh.close();
  }
}
