import { basename } from 'node:path';
import { z } from 'zod';
import { AirlockError, EXIT, StoreError, type ErrorCode } from '../errors.js';
import { describeFsError, readRegularFileIfExists } from '../util/fsx.js';
import { parseJsonText } from '../util/json-text.js';
import { MANIFEST_BOUNDS, ManifestSchema, parseManifest, type Manifest } from '../package/manifest.js';
import { isLabel, versionPaths } from './paths.js';
import { describeIssue } from '../upstream/describe.js';

/** version.json: what the store knows about a version besides its manifest (docs/design.md). */
/** Text we print (list): our own writer never puts control characters there. */
const Printable = z
  .string()
  .max(1024)
  // eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
  .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, 'control characters');
export const VersionMetaSchema = z
  .object({
    label: z.string(),
    domain: Printable,
    importedAt: z.string().datetime({ offset: true }),
    /** null for a version imported from a delta: it has no package file until one is built (rebuilt-package.ts). */
    packageSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .nullable(),
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
  })
  .passthrough();
export type VersionMeta = z.infer<typeof VersionMetaSchema>;

/** The store's own small files (state.json, version.json, leases) hold a few hundred bytes. */
export const SMALL_JSON_BYTES = 1024 * 1024;

export interface JsonFileOptions {
  maxBytes?: number;
  code?: ErrorCode;
}

/** An errno-shaped error for the callers that tell a missing file (or a path through a file) apart. */
function errnoError(code: 'ENOENT' | 'ENOTDIR', path: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${path}: ${describeFsError({ code })}`), { code, path });
}
const NOT_A_FOLDER_ON_PATH = describeFsError({ code: 'ENOTDIR' });

/**
 * The bytes of a store file, bounded BEFORE it is read, regular files only, opened non-blocking
 * (a FIFO, a device, a folder or a symlink loop is refused from its type, never waited on or read
 * forever): refused through `damaged(why)`. ENOENT and ENOTDIR come back as errno-shaped errors,
 * for callers that allow a missing file or skip a stray file where a version folder should be.
 */
async function readStoreFile(path: string, maxBytes: number, damaged: (why: string) => Error): Promise<Buffer> {
  const bytes = await readRegularFileIfExists(path, {
    maxBytes,
    noFollow: true, // airlock never writes a store file as a link: one there (to another store's file) is not followed
    refuse: (why) => (why === NOT_A_FOLDER_ON_PATH ? errnoError('ENOTDIR', path) : damaged(why)),
  });
  if (bytes === null) throw errnoError('ENOENT', path);
  return bytes;
}

/**
 * Read a JSON file of the store, bounded BEFORE it is read, and check its shape. A store file
 * that is damaged or edited by hand into something else (or replaced by a FIFO, a device, a
 * folder, a symlink loop) is a configuration problem (exit 2) named by its path; a missing file
 * (ENOENT) or a path through a file (ENOTDIR) is thrown errno-shaped for callers that allow it.
 */
export async function readJsonFile<T>(path: string, schema: z.ZodType<T>, what: string, o: JsonFileOptions = {}): Promise<T> {
  const max = o.maxBytes ?? SMALL_JSON_BYTES;
  const damaged = (why: string) =>
    new StoreError(
      o.code ?? 'AIRLOCK_BAD_VERSION',
      `${what} ${path} ${why}; the store file was damaged or edited by hand (restore it, or remove what it belongs to)`,
      { subject: path },
      EXIT.USAGE,
    );
  // Not UTF-8, not JSON, or a key named twice (JSON.parse would keep the last): damaged.
  const json = parseJsonText(await readStoreFile(path, max, damaged), damaged, what);
  const parsed = schema.safeParse(json);
  if (!parsed.success)
    throw damaged(
      `has an unexpected shape (${parsed.error.issues[0]?.path.join('.') || 'top level'}: ${parsed.error.issues[0] ? describeIssue(parsed.error.issues[0]) : ''})`,
    );
  return parsed.data;
}

/** version.json of the version folder `dir`; its label must be the folder's name. */
export async function readMeta(versionDir: string): Promise<VersionMeta> {
  const path = versionPaths(versionDir).meta;
  const meta = await readJsonFile(path, VersionMetaSchema, 'version metadata');
  const folder = basename(versionDir);
  if (meta.label !== folder || !isLabel(meta.label)) {
    throw new StoreError(
      'AIRLOCK_BAD_VERSION',
      `version metadata ${path} names the version ${JSON.stringify(meta.label)} but sits in folder ${folder}; the store file was damaged or edited by hand`,
      { subject: path },
      EXIT.USAGE,
    );
  }
  return meta;
}

/** The size bound of src/package's reader: a stored manifest is one it read. */
const MANIFEST_BYTES = MANIFEST_BOUNDS.maxBytes;

/** airlock.json of the version folder `dir` (the exact manifest bytes of the imported package). */
export async function readStoredManifest(versionDir: string): Promise<Manifest> {
  const path = versionPaths(versionDir).manifest;
  try {
    return await readJsonFile(path, ManifestSchema, 'manifest', { maxBytes: MANIFEST_BYTES });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'ENOTDIR') throw err;
    throw new StoreError(
      'AIRLOCK_BAD_VERSION',
      `manifest ${path} ${describeFsError(err)}; the version folder was damaged or edited by hand`,
      { subject: path },
      EXIT.USAGE,
    );
  }
}

/** The stored manifest's exact bytes and their parse, bounded before it is read as readStoredManifest is. */
export async function readStoredManifestBytes(versionDir: string): Promise<{ bytes: Buffer; manifest: Manifest }> {
  const bytes = await readStoredManifestRaw(versionDir);
  const path = versionPaths(versionDir).manifest;
  try {
    return { bytes, manifest: parseManifest(bytes, path) };
  } catch (err) {
    // A package's refusal is exit 4; the same bytes in a store are a damaged store file (exit 2).
    if (!(err instanceof AirlockError) || err.exitCode !== EXIT.VERIFICATION) throw err;
    throw new StoreError('AIRLOCK_BAD_VERSION', `manifest ${err.message}; the store file was damaged or edited by hand`, { subject: path }, EXIT.USAGE);
  }
}

/** The stored manifest's exact bytes, bounded before they are read (ENOENT and ENOTDIR pass through, errno-shaped). */
export async function readStoredManifestRaw(versionDir: string): Promise<Buffer> {
  const path = versionPaths(versionDir).manifest;
  return readStoreFile(
    path,
    MANIFEST_BYTES,
    (why) => new StoreError('AIRLOCK_BAD_VERSION', `manifest ${path} ${why}; the store file was damaged or edited by hand`, { subject: path }, EXIT.USAGE),
  );
}
