import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { MalformedError, StoreError } from '../errors.js';
import { VERSION_LABEL } from '../cli/args.js';

/**
 * What the server needs of a version, read from the store layout of docs/DESIGN.md
 * (S/versions/<label>/{airlock.json,version.json,site/,variants/}). Everything read here is
 * validated with zod: the store is ours, but a server must fail closed on a damaged one.
 */
export interface FileRecord { path: string; size: number; sha256: string }
export interface VariantSizes { br?: number; gz?: number }
export interface VersionSource {
  label: string;
  domain: string;
  importedAt: string;
  pageCount: number | null;
  siteDir: string;
  /** Folder holding `<sha256>.br|.gz`, or null (preview: no variants). */
  variantsDir: string | null;
  files: FileRecord[];
  variants: Map<string, VariantSizes>;
}

const Sha = z.string().regex(/^[0-9a-f]{64}$/);
const FileSchema = z.object({ path: z.string().min(1), size: z.number().int().nonnegative(), sha256: Sha });
const ManifestFiles = z.object({ domain: z.string(), pageCount: z.number().nullable().optional(), files: z.array(FileSchema) }).passthrough();
const VersionMeta = z.object({ label: z.string(), domain: z.string().optional(), importedAt: z.string(), pageCount: z.number().nullable().optional() }).passthrough();
const Sizes = z.object({ br: z.number().int().nonnegative().optional(), gz: z.number().int().nonnegative().optional() });
/** variants/index.json as src/store writes it (`{format: 1, files: {<sha256>: {br?, gz?}}}`), or older shapes. */
const VariantIndex = z.union([
  z.object({ format: z.literal(1), files: z.record(Sha, Sizes) }).transform((v) => v.files),
  z.record(Sha, Sizes),
  z.object({ variants: z.record(Sha, Sizes) }).transform((v) => v.variants),
  z.array(Sizes.extend({ sha256: Sha })).transform((a) => Object.fromEntries(a.map(({ sha256, ...s }) => [sha256, s]))),
]);
const State = z.object({ active: z.string().nullable(), previous: z.string().nullable().optional() }).passthrough();

export function versionDir(store: string, label: string): string {
  if (!VERSION_LABEL.test(label)) throw new StoreError('AIRLOCK_BAD_VERSION', `invalid version label ${JSON.stringify(label)}`, { subject: label });
  return join(store, 'versions', label);
}

async function readJson<T>(file: string, schema: z.ZodType<T>): Promise<T> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new StoreError(code === 'ENOENT' ? 'AIRLOCK_NOT_FOUND' : 'AIRLOCK_STORE_READ', `cannot read ${file}: ${code ?? String(err)}`, { subject: file });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new MalformedError('AIRLOCK_MALFORMED', `${file}: not valid JSON`, { subject: file });
  }
  const r = schema.safeParse(json);
  if (!r.success) throw new MalformedError('AIRLOCK_MALFORMED', `${file}: ${r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`, { subject: file });
  return r.data;
}

/** The active version label of a store, or null. */
export async function readActive(store: string): Promise<string | null> {
  return (await readJson(join(store, 'state.json'), State)).active;
}

export async function loadFromStore(store: string, label: string): Promise<VersionSource> {
  const dir = versionDir(store, label);
  const [manifest, meta] = await Promise.all([readJson(join(dir, 'airlock.json'), ManifestFiles), readJson(join(dir, 'version.json'), VersionMeta)]);
  let variants = new Map<string, VariantSizes>();
  try {
    variants = new Map(Object.entries(await readJson(join(dir, 'variants', 'index.json'), VariantIndex)));
  } catch (err) {
    // Variants are built after commit: a version without them yet is served uncompressed.
    if (!(err instanceof StoreError && err.code === 'AIRLOCK_NOT_FOUND')) throw err;
  }
  return {
    label,
    domain: meta.domain ?? manifest.domain,
    importedAt: meta.importedAt,
    pageCount: meta.pageCount ?? manifest.pageCount ?? null,
    siteDir: join(dir, 'site'),
    variantsDir: join(dir, 'variants'),
    files: manifest.files,
    variants,
  };
}

/** A site folder outside any store (preview): no variants, validators from the load time. */
export interface SiteInput { dir: string; files: FileRecord[]; label?: string; domain?: string; importedAt?: string; pageCount?: number | null }

export function siteSource(s: SiteInput): VersionSource {
  return {
    label: s.label ?? 'preview',
    domain: s.domain ?? '',
    importedAt: s.importedAt ?? new Date().toISOString(),
    pageCount: s.pageCount ?? null,
    siteDir: s.dir,
    variantsDir: null,
    files: s.files,
    variants: new Map(),
  };
}
