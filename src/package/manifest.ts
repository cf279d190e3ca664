import { z } from 'zod';
import { MalformedError } from '../errors.js';
import type { ArchiveFormat, FileRecord } from '../archive/types.js';

/** CONTRACT "Package format": the manifest, first member of every `.airlock` package. */
export interface Manifest {
  format: 'airlock-package/1';
  domain: string;
  version: string;
  jobId: string | null;
  createdAt: string;
  pageCount: number | null;
  archive: { name: string; format: ArchiveFormat; size: number; sha256: string };
  files: FileRecord[];
}

export const MANIFEST_FORMAT = 'airlock-package/1';
/** CONTRACT "Version labels". */
export const VERSION_LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
/** The archive member names the contract allows, and the format each one must carry. */
export const ARCHIVE_NAMES: Record<string, ArchiveFormat> = {
  'bundle.tar.gz': 'tar.gz',
  'bundle.tgz': 'tar.gz',
  'bundle.tar': 'tar',
  'bundle.zip': 'zip',
};

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256');
const Size = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

// Unknown fields pass through (the contract says more may be added) so a newer writer's package
// still verifies, and the exact bytes are what is signed, never a re-serialisation.
export const ManifestSchema = z.looseObject({
  format: z.literal(MANIFEST_FORMAT),
  domain: z.string().min(1).max(253),
  version: z.string().regex(VERSION_LABEL, `must match ${VERSION_LABEL.source}`),
  jobId: z.string().min(1).nullable(),
  createdAt: z.iso.datetime({ offset: true }),
  pageCount: z.number().int().nonnegative().nullable(),
  archive: z.looseObject({
    name: z.enum(Object.keys(ARCHIVE_NAMES) as [string, ...string[]]),
    format: z.enum(['tar.gz', 'tar', 'zip']),
    size: Size,
    sha256: Sha256,
  }).refine((a) => ARCHIVE_NAMES[a.name] === a.format, { message: 'archive.name does not match archive.format', path: ['name'] }),
  files: z.array(z.looseObject({ path: z.string().min(1), size: Size, sha256: Sha256 })),
}) as unknown as z.ZodType<Manifest>;

/** Parse untrusted manifest bytes (fail closed: not UTF-8 JSON, or not the schema → exit 4, naming the field). */
export function parseManifest(bytes: Buffer, subject = 'airlock.json'): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} is not UTF-8 JSON: ${(err as Error).message}`, { subject }, { cause: err });
  }
  const r = ManifestSchema.safeParse(json);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} is not a valid airlock-package/1 manifest: ${issues}`, { subject, issues: r.error.issues.map((i) => i.path.join('.')) });
  }
  return r.data;
}

/** The exact bytes written as airlock.json (what gets signed). */
export function serializeManifest(m: Manifest): Buffer {
  return Buffer.from(JSON.stringify(m, null, 2) + '\n', 'utf8');
}
