import { createHash } from 'node:crypto';
import { z } from 'zod';
import { DigestMismatchError, MalformedError } from '../errors.js';
import { checkEntryPath } from '../archive/paths.js';
import { CONTROL_CHARS } from './label.js';

/**
 * Vendoring: third-party resources (web fonts, CDN stylesheets, optionally scripts) downloaded on
 * the connected side (`fetch --vendor`, `pack --vendor`) and carried in the package as members
 * of their own after the bundle, one per distinct content: `vendor/<sha256>.<ext>`. The
 * manifest's optional `vendor` field lists them (so the signature covers them); a package
 * without it is exactly the package of before. Every bound here is checked by the schema, on the
 * manifest, before a vendored byte is read.
 */
export const VENDOR_KINDS = ['fonts', 'styles', 'scripts'] as const;
export type VendorKind = (typeof VENDOR_KINDS)[number];

/** The extension of a vendored member and the content type it is served with (nothing else is carried). */
export const VENDOR_TYPES: Readonly<Record<string, string>> = Object.freeze({
  woff2: 'font/woff2',
  woff: 'font/woff',
  ttf: 'font/ttf',
  otf: 'font/otf',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  svg: 'image/svg+xml',
  webp: 'image/webp',
});

/** At most this many vendored files, each at most MAX_VENDOR_FILE_BYTES, all together at most MAX_VENDOR_TOTAL_BYTES. */
export const MAX_VENDOR_FILES = 256;
export const MAX_VENDOR_FILE_BYTES = 8 * 1024 * 1024;
export const MAX_VENDOR_TOTAL_BYTES = 64 * 1024 * 1024;
/** Original URLs one vendored file answers for (the same bytes from two URLs are carried once). */
export const MAX_VENDOR_URLS = 16;
export const MAX_VENDOR_URL_LENGTH = 2048;

/** `vendor/<64 hex>.<ext>`: a flat name under vendor/, so no path of it can escape anything. */
export const VENDOR_PATH = new RegExp(`^vendor/([0-9a-f]{64})\\.(${Object.keys(VENDOR_TYPES).join('|')})$`);

export interface VendorRecord {
  /** The member name, `vendor/<sha256>.<ext>`. */
  path: string;
  size: number;
  sha256: string;
  kind: VendorKind;
  /** The absolute https URLs the export references this content by (as written, after resolving). */
  urls: string[];
  /** Site stylesheets (paths in the site) this file is a rewritten copy of: their links are served from here. */
  site?: string[];
}

/** An https URL as vendoring records it: absolute, no credentials, no fragment, no control characters. */
export function vendorUrlProblem(u: string): string | null {
  if (u.length > MAX_VENDOR_URL_LENGTH) return `must be at most ${MAX_VENDOR_URL_LENGTH} characters`;
  if (CONTROL_CHARS.test(u) || /\s/.test(u)) return 'must not contain control characters or spaces';
  let p: URL;
  try {
    p = new URL(u);
  } catch {
    return 'must be an absolute URL';
  }
  if (p.protocol !== 'https:') return 'must be an https URL';
  if (p.username || p.password) return 'must not carry credentials';
  if (p.hash) return 'must not carry a fragment';
  if (p.href !== u) return 'must be in normal form';
  return null;
}

const Url = z.string().superRefine((u, ctx) => {
  const why = vendorUrlProblem(u);
  if (why) ctx.addIssue({ code: 'custom', message: why });
});

export const VendorRecordSchema = z
  .looseObject({
    path: z.string().max(100).regex(VENDOR_PATH, 'must be vendor/<sha256>.<ext> (a known font, style, script or image extension)'),
    size: z.number().int().nonnegative().max(MAX_VENDOR_FILE_BYTES),
    sha256: z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256'),
    kind: z.enum(VENDOR_KINDS),
    urls: z.array(Url).max(MAX_VENDOR_URLS),
    site: z
      .array(
        z
          .string()
          .max(1024)
          .refine((p) => sitePathOk(p) && p.endsWith('.css'), 'must be a normalised relative path of a .css file of the site'),
      )
      .min(1)
      .max(MAX_VENDOR_URLS)
      .optional(),
  })
  .refine((r) => VENDOR_PATH.exec(r.path)?.[1] === r.sha256, { message: 'path must name the sha256', path: ['path'] })
  .refine((r) => r.urls.length > 0 || (r.site?.length ?? 0) > 0, { message: 'a vendored file must name at least one URL or site stylesheet', path: ['urls'] });

function sitePathOk(p: string): boolean {
  try {
    const e = checkEntryPath(p);
    return !e.trailingSlash && e.path === p;
  } catch {
    return false;
  }
}

export const VendorListSchema = z
  .array(VendorRecordSchema)
  .min(1)
  .max(MAX_VENDOR_FILES)
  .superRefine((list, ctx) => {
    const paths = new Set<string>();
    const urls = new Set<string>();
    let total = 0;
    for (const [i, r] of list.entries()) {
      if (paths.has(r.path)) ctx.addIssue({ code: 'custom', message: `${r.path} is listed twice`, path: [i, 'path'] });
      paths.add(r.path);
      for (const u of r.urls) {
        if (urls.has(u)) ctx.addIssue({ code: 'custom', message: 'a URL is listed twice', path: [i, 'urls'] });
        urls.add(u);
      }
      total += r.size;
    }
    if (total > MAX_VENDOR_TOTAL_BYTES) ctx.addIssue({ code: 'custom', message: `vendored files total ${total} bytes, more than ${MAX_VENDOR_TOTAL_BYTES}` });
  });

/** The content type a vendored member is served with (from its checked name). */
export function vendorContentType(path: string): string {
  const m = VENDOR_PATH.exec(path);
  return (m && VENDOR_TYPES[m[2]!]) || 'application/octet-stream';
}

/**
 * Hash every vendored member of a package in place and compare it with the manifest (exit 4
 * naming the file and its URL on a mismatch). `onFile` gets each file's bytes once they are known
 * to be the listed ones (import writes them into the store). Each member is at most
 * MAX_VENDOR_FILE_BYTES (the schema), so it is read whole.
 */
export async function verifyVendored(
  read: (offset: number, length: number) => Promise<Buffer>,
  manifest: { vendor?: VendorRecord[] },
  members: ReadonlyArray<{ name: string; offset: number; size: number }>,
  onFile?: (r: VendorRecord, bytes: Buffer) => Promise<void>,
): Promise<void> {
  const listed = manifest.vendor ?? [];
  for (const [i, r] of listed.entries()) {
    const m = members[i];
    if (!m || m.name !== r.path || m.size !== r.size)
      throw new MalformedError('AIRLOCK_VENDOR_MEMBERS', `airlock.json lists vendored file ${r.path} but the package does not hold it there`, {
        subject: r.path,
      });
    const bytes = await read(m.offset, m.size);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    if (sha256 !== r.sha256) {
      throw new DigestMismatchError('AIRLOCK_VENDOR_DIGEST', `vendored file ${r.path} (${r.urls[0]}) has sha256 ${sha256} but the manifest says ${r.sha256}`, {
        subject: r.path,
        url: r.urls[0],
        expected: r.sha256,
        actual: sha256,
      });
    }
    await onFile?.(r, bytes);
  }
}

/** The vendored members must be exactly the manifest's `vendor` list: same names, sizes and order, nothing more. */
export function checkVendorMembers(listed: readonly VendorRecord[], members: ReadonlyArray<{ name: string; size: number }>): void {
  for (let i = 0; i < Math.max(listed.length, members.length); i++) {
    const want = listed[i];
    const got = members[i];
    if (!want)
      throw new MalformedError('AIRLOCK_VENDOR_MEMBERS', `package holds vendored member ${JSON.stringify(got!.name)} that airlock.json does not list`, {
        subject: got!.name,
      });
    if (!got)
      throw new MalformedError('AIRLOCK_VENDOR_MEMBERS', `airlock.json lists vendored file ${want.path} (${want.urls[0]}) but the package does not hold it`, {
        subject: want.path,
      });
    if (got.name !== want.path)
      throw new MalformedError('AIRLOCK_VENDOR_MEMBERS', `vendored member ${i + 1} is ${JSON.stringify(got.name)} but airlock.json lists ${want.path} there`, {
        subject: got.name,
      });
    if (got.size !== want.size)
      throw new MalformedError('AIRLOCK_VENDOR_MEMBERS', `vendored member ${want.path} is ${got.size} bytes but airlock.json says ${want.size}`, {
        subject: want.path,
      });
  }
}
