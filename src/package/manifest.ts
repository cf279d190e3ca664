import { z } from 'zod';
import { MalformedError } from '../errors.js';
import { checkEntryPath } from '../archive/paths.js';
import type { ArchiveFormat, FileRecord } from '../archive/types.js';
import { checkJsonBounds, type JsonBounds } from './json-bounds.js';
import { CONTROL_CHARS, DOMAIN, VERSION_LABEL } from './label.js';
import { VendorListSchema, type VendorRecord } from './vendor.js';
import { escapeJson } from '../util/terminal.js';
import { parseJsonText } from '../util/json-text.js';
import { describeIssues } from '../upstream/describe.js';

/** The package format: the manifest, first member of every `.airlock` package. */
export interface Manifest {
  format: 'airlock-package/1';
  domain: string;
  version: string;
  jobId: string | null;
  createdAt: string;
  pageCount: number | null;
  archive: { name: string; format: ArchiveFormat; size: number; sha256: string };
  files: FileRecord[];
  /**
   * Optional: monotonic per domain (fetch and pack write the creation time in ms); a
   * store with a trust policy refuses a package whose sequence is below the highest it has seen.
   */
  sequence?: number;
  /** Optional: after this time a store with a trust policy refuses the package (freeze attacks). */
  expiresAt?: string;
  /** Optional: the identity of the one store this package is for. */
  audience?: string;
  /**
   * Optional: third-party resources carried as members `vendor/<sha256>.<ext>` after
   * the bundle, in this order (`fetch --vendor`); absent in every package made without it.
   */
  vendor?: VendorRecord[];
}

export const MANIFEST_FORMAT = 'airlock-package/1';
/** The archive member names the contract allows, and the format each one must carry. */
export const ARCHIVE_NAMES: Record<string, ArchiveFormat> = {
  'bundle.tar.gz': 'tar.gz',
  'bundle.tgz': 'tar.gz',
  'bundle.tar': 'tar',
  'bundle.zip': 'zip',
};

/**
 * Bounds checked on the raw bytes before JSON.parse. A real manifest nests 3 levels (root,
 * `files`, one file); 64 levels leave room for fields added later. Size: a file's record as the
 * writer prints it (two-space indent) is ~140 bytes plus its path, so at the default maxFiles
 * (200,000) 128 MiB leaves ~530 bytes of path per file on average, several times what real
 * sites use. It is not the largest manifest the other limits allow: 200,000 paths at the
 * 4096-byte path limit would take ~850 MB, so this bound is also the average-path limit.
 */
export const MANIFEST_BOUNDS: JsonBounds = Object.freeze({ maxBytes: 128 * 1024 * 1024, maxDepth: 64 });

/** A store's identity (trust policy) and a package's audience. */
export const STORE_IDENTITY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256');
const Size = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
const NoControl = (max: number) =>
  z
    .string()
    .min(1)
    .max(max)
    .refine((s) => !CONTROL_CHARS.test(s), 'must not contain control characters');

/**
 * A site path as the archive reader gives it (src/archive's entry rules, normalised, after
 * stripping): anything else can never match a scanned file, and a manifest that lists one is
 * not ours. The same rules refuse control characters, NUL, backslashes, `..` and absolute paths.
 */
function sitePathProblem(p: string): string | null {
  try {
    const e = checkEntryPath(p);
    if (e.trailingSlash || e.path !== p) return 'must be a normalised relative path ("a/b.html": no "./", "//" or trailing "/")';
    return null;
  } catch (err) {
    const prefix = `unsafe archive entry ${JSON.stringify(p)}: `; // src/archive's wording, without the (untrusted) name
    const msg = (err as Error).message;
    return `must be a safe relative path: ${msg.startsWith(prefix) ? msg.slice(prefix.length) : 'refused by the archive rules'}`;
  }
}
const SitePath = z
  .string()
  .min(1)
  .superRefine((p, ctx) => {
    const why = sitePathProblem(p);
    if (why) ctx.addIssue({ code: 'custom', message: why });
  });

// Unknown fields pass through (the contract says more may be added) so a newer writer's package
// still verifies, and the exact bytes are what is signed, never a re-serialisation.
export const ManifestSchema = z.looseObject({
  format: z.literal(MANIFEST_FORMAT),
  domain: z.string().regex(DOMAIN, 'must be a host name in lower case like docs.example.com'),
  version: z.string().regex(VERSION_LABEL, `must match ${VERSION_LABEL.source}`),
  jobId: NoControl(256).nullable(),
  createdAt: z.iso.datetime({ offset: true }),
  pageCount: z.number().int().nonnegative().nullable(),
  archive: z
    .looseObject({
      name: z.enum(Object.keys(ARCHIVE_NAMES) as [string, ...string[]]),
      format: z.enum(['tar.gz', 'tar', 'zip']),
      size: Size,
      sha256: Sha256,
    })
    .refine((a) => ARCHIVE_NAMES[a.name] === a.format, { message: 'archive.name does not match archive.format', path: ['name'] }),
  files: z.array(z.looseObject({ path: SitePath, size: Size, sha256: Sha256 })),
  sequence: Size.optional(),
  expiresAt: z.iso.datetime({ offset: true }).optional(),
  audience: z.string().regex(STORE_IDENTITY, 'must be a store identity (letters, digits, ".", "_", "-"; at most 128)').optional(),
  vendor: VendorListSchema.optional(),
}) as unknown as z.ZodType<Manifest>;

/** At most this many schema issues are spelled out in a message (a hostile manifest can have millions). */
const MAX_ISSUES_SHOWN = 5;

/**
 * Parse untrusted manifest bytes (fail closed → exit 4 naming `subject`): too big or too deep
 * (checked on the bytes, before parsing), not UTF-8 JSON (in words, a position at most), a key
 * named twice in one object (JSON.parse would keep the last: the signed bytes would say two
 * things), or not the schema (naming the fields).
 */
export function parseManifest(bytes: Buffer, subject = 'airlock.json'): Manifest {
  checkJsonBounds(bytes, MANIFEST_BOUNDS, subject);
  const json = parseJsonText(bytes, (why) => new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} ${why}`, { subject }), 'a manifest');
  const r = ManifestSchema.safeParse(json);
  if (!r.success) {
    const all = r.error.issues;
    const shown = describeIssues(all, MAX_ISSUES_SHOWN, (i) => offending(json, i.path)).join('; ');
    throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} is not a valid airlock-package/1 manifest: ${shown}`, {
      subject,
      issues: all.slice(0, 100).map((i) => i.path.join('.')),
    });
  }
  return r.data;
}

/** The longest offending value quoted in a message (a hostile manifest's path may be kilobytes). */
const MAX_SHOWN_VALUE = 200;

/** A value from the manifest for a message: JSON-quoted, control and bidi characters as \u escapes, bounded. */
function quoteValue(v: string): string {
  const cut = v.length > MAX_SHOWN_VALUE ? `${v.slice(0, MAX_SHOWN_VALUE)}…` : v;
  return escapeJson(JSON.stringify(cut));
}

/**
 * The entry an issue is about, named beside its index: the offending string itself
 * (`files.0.path "../escape.txt"`), else the `path` of the listed file or record the issue lies
 * in (`files.3.sha256 (of "a.html")`); empty when neither is a string.
 */
function offending(json: unknown, path: readonly PropertyKey[]): string {
  let node: unknown = json;
  let owner: string | null = null;
  for (const key of path) {
    if (node === null || typeof node !== 'object') return '';
    node = (node as Record<PropertyKey, unknown>)[key];
    const named = node !== null && typeof node === 'object' ? (node as Record<string, unknown>).path : undefined;
    if (typeof named === 'string') owner = named;
  }
  if (typeof node === 'string' && path.some((k) => typeof k === 'number')) return ` ${quoteValue(node)}`;
  return owner === null ? '' : ` (of ${quoteValue(owner)})`;
}

/** The exact bytes written as airlock.json (what gets signed). */
export function serializeManifest(m: Manifest): Buffer {
  return Buffer.from(JSON.stringify(m, null, 2) + '\n', 'utf8');
}
