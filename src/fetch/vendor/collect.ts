import { createHash } from 'node:crypto';
import { extractArchive, readArchive, type ArchiveLimits } from '../../archive/index.js';
import {
  MAX_VENDOR_FILES,
  MAX_VENDOR_FILE_BYTES,
  MAX_VENDOR_TOTAL_BYTES,
  MAX_VENDOR_URLS,
  vendorUrlProblem,
  type VendorKind,
  type VendorRecord,
  type VendoredFiles,
} from '../../package/index.js';
import { cssRefs, resolveRef, rewriteCss } from './css.js';
import { LOCAL, extensionOf, isFontCss, scanHtml, scanSiteCss, type Found } from './scan.js';
import { vendorForUrl } from '../../features/analytics.js';
import { vendorError, vendorGet, type Got, type VendorGetOptions } from './get.js';
import {
  OBSERVE_MAX_PAGES,
  OBSERVE_MAX_REQUESTS,
  OBSERVE_PAGE_TIMEOUT_MS,
  observePages,
  samplePages,
  type ObserveReport,
  type ObservedRequest,
} from './observe.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * `--vendor fonts,styles[,scripts]` (vendoring): after the export archive is verified, find the
 * third-party resources its pages use, download them and return them for the package:
 * - fonts: web-font stylesheets (`<link rel=stylesheet>` or `@import` of a font service, such as
 *   fonts.googleapis.com) and every font file their `url()`s name; `@font-face` files named by the
 *   site's own CSS;
 * - styles: every other external stylesheet (`<link rel=stylesheet>`, `@import`) and what it names by `url()`;
 * - scripts: external `<script src>` (only when asked: vendored code runs on the isolated origin).
 * A vendored stylesheet's references to other vendored files are rewritten to their copies
 * (same folder: `<sha256>.<ext>`); the digest recorded is that of the bytes carried.
 * A site stylesheet that names vendored files is carried as a rewritten copy too (`site`), so
 * `serve` can point the pages' links at it without touching the verified site files.
 */
export interface CollectOptions extends Omit<VendorGetOptions, 'maxBytes'> {
  kinds: ReadonlySet<VendorKind>;
  limits?: Partial<ArchiveLimits>;
  maxFiles?: number;
  maxFileBytes?: number;
  maxTotalBytes?: number;
  onFile?: (url: string, size: number) => void;
  /** `--vendor-observe`: also carry what a sample of the pages loads at run time (observe.ts). */
  observe?: ObserveAsk;
}

export interface ObserveAsk {
  chromium: string;
  maxPages?: number;
  pageTimeoutMs?: number;
  maxRequests?: number;
  /** What the observation did, or why there was none (no Chromium: the static scan only). */
  onReport?: (r: ObserveReport) => void;
}

/** Pages and stylesheets of the export larger than this are not scanned (generated API references). */
const MAX_SCAN_BYTES = 8 * 1024 * 1024;
/** A stylesheet importing a stylesheet importing …: at most this deep. */
const MAX_CSS_DEPTH = 4;
/** Google Fonts answers with woff2 only to a browser it knows. */
export const BROWSER_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

export { parseKinds } from './flags.js';

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

export async function collectVendored(archivePath: string, strip: string, o: CollectOptions): Promise<VendoredFiles & { skipped: string[] }> {
  const maxFiles = Math.min(o.maxFiles ?? MAX_VENDOR_FILES, MAX_VENDOR_FILES);
  const maxFileBytes = Math.min(o.maxFileBytes ?? MAX_VENDOR_FILE_BYTES, MAX_VENDOR_FILE_BYTES);
  const maxTotal = Math.min(o.maxTotalBytes ?? MAX_VENDOR_TOTAL_BYTES, MAX_VENDOR_TOTAL_BYTES);
  const wanted = new Map<string, Found>();
  const skipped = new Set<string>();
  const siteCss: Array<{ path: string; text: string }> = [];
  const found = (f: Found) => {
    if (!o.kinds.has(f.kind) || wanted.has(f.url)) return;
    // Trackers and consent managers are never carried: serve removes them when analytics is off.
    if (vendorForUrl(f.url) !== undefined) return;
    if (vendorUrlProblem(f.url) !== null) return void skipped.add(f.url);
    wanted.set(f.url, f);
  };
  const report = (u: string) => void skipped.add(u);
  const pages: Array<{ path: string; refs: string[] }> = [];
  for await (const e of readArchive({ path: archivePath }, { limits: o.limits })) {
    const path = strip && e.path.startsWith(strip) ? e.path.slice(strip.length) : e.path;
    const lower = path.toLowerCase();
    const isHtml = lower.endsWith('.html') || lower.endsWith('.htm');
    const isCss = lower.endsWith('.css');
    if ((!isHtml && !isCss) || e.size > MAX_SCAN_BYTES) {
      e.stream.resume();
      continue;
    }
    const bytes = await readAll(e.stream);
    if (isHtml) {
      const refs: string[] = [];
      await scanHtml(bytes, found, report, o.observe ? refs : undefined);
      if (o.observe && pages.length < MAX_PAGES_LISTED) pages.push({ path, refs });
    } else {
      const text = bytes.toString('utf8');
      const before = wanted.size;
      scanSiteCss(path, text, found, report);
      if (wanted.size > before || cssRefs(text).some((r) => wanted.has(resolveRef(r.url, LOCAL + path) ?? ''))) siteCss.push({ path, text });
    }
  }

  const records = new Map<string, VendorRecord>(); // by member path
  const bytesOf = new Map<string, Buffer>();
  const byUrl = new Map<string, string>(); // url → member path
  const inProgress = new Set<string>();
  let total = 0;
  const download = (url: string) => vendorGet(url, { ...o, maxBytes: maxFileBytes });
  let observed: Map<string, Promise<Got>> = new Map();
  if (o.observe) {
    const r = await observe(archivePath, o, o.observe, pages, download);
    for (const q of r.requests) found(observedFound(q));
    for (const u of r.skipped) skipped.add(u);
    observed = r.got;
    o.observe.onReport?.(r.report);
  }
  const get = (url: string) => observed.get(url) ?? download(url);

  const keep = (url: string, kind: VendorKind, bytes: Buffer, ext: string): string => {
    const sha = sha256(bytes);
    const path = `vendor/${sha}.${ext}`;
    const r = records.get(path);
    if (r) {
      if (r.urls.length < MAX_VENDOR_URLS && url) r.urls.push(url);
    } else {
      if (records.size >= maxFiles) throw vendorError(url, `more than ${maxFiles} files to vendor (the limit)`, 'AIRLOCK_VENDOR_LIMIT');
      total += bytes.length;
      if (total > maxTotal) throw vendorError(url, `the vendored files pass the total limit of ${maxTotal} bytes`, 'AIRLOCK_VENDOR_LIMIT');
      records.set(path, { path, size: bytes.length, sha256: sha, kind, urls: url ? [url] : [] });
      bytesOf.set(path, bytes);
      o.onFile?.(url, bytes.length);
    }
    if (url) byUrl.set(url, path);
    return path;
  };

  /** Rewrite every reference of a stylesheet whose target can be vendored; returns the new text. */
  const vendorRefs = async (text: string, base: string, kind: VendorKind, depth: number): Promise<string> => {
    const to = new Map<string, string>();
    for (const r of cssRefs(text)) {
      const u = resolveRef(r.url, base);
      if (u === null || u.startsWith(LOCAL) || !/^https?:\/\//.test(u) || to.has(u)) continue;
      if (u.startsWith('http://') && !o.mirrors.has(new URL(u).origin)) {
        skipped.add(u);
        continue;
      }
      const path = r.via === 'import' ? await one(u, kind, 'css', depth + 1) : await one(u, kind, 'asset', depth + 1);
      if (path !== null) to.set(u, path);
    }
    return rewriteCss(text, (r) => {
      const u = resolveRef(r.url, base);
      const p = u === null ? undefined : to.get(u);
      return p === undefined ? undefined : p.slice('vendor/'.length);
    });
  };

  const one = async (url: string, kind: VendorKind, as: Found['as'], depth: number): Promise<string | null> => {
    const done = byUrl.get(url);
    if (done !== undefined) return done;
    if (inProgress.has(url) || depth > MAX_CSS_DEPTH || vendorUrlProblem(url) !== null) return null;
    inProgress.add(url);
    try {
      const got = await get(url);
      const ext = extensionOf(got.bytes, got.contentType, as);
      if (ext === null)
        throw vendorError(
          url,
          `unexpected content (type ${JSON.stringify(got.contentType)}) for a ${as === 'asset' ? 'font or image' : as === 'css' ? 'stylesheet' : 'script'}`,
          'AIRLOCK_VENDOR_TYPE',
        );
      let bytes = got.bytes;
      if (ext === 'css') bytes = Buffer.from(await vendorRefs(bytes.toString('utf8'), url, kind, depth), 'utf8');
      return keep(url, kind, bytes, ext);
    } finally {
      inProgress.delete(url);
    }
  };

  for (const f of wanted.values()) await one(f.url, f.kind, f.as, 0);
  // The site's own stylesheets that name vendored files: a rewritten copy each (the site file stays as verified).
  for (const c of siteCss) {
    const base = LOCAL + c.path;
    const rewritten = rewriteCss(c.text, (r) => {
      const u = resolveRef(r.url, base);
      if (u === null) return undefined;
      if (u.startsWith(LOCAL)) return '/' + u.slice(LOCAL.length); // relative site references still reach the site from /_airlock/vendor/
      const p = byUrl.get(u);
      return p === undefined ? undefined : p.slice('vendor/'.length);
    });
    if (rewritten === c.text) continue;
    const path = keep('', kindOfSite(c.text, base, byUrl, records), Buffer.from(rewritten, 'utf8'), 'css');
    const r = records.get(path)!;
    r.site = [...(r.site ?? []), c.path];
  }
  return { records: [...records.values()], bytes: bytesOf, skipped: [...skipped] };
}

/** Pages listed for the sample (the first ones in archive order beyond this are not candidates). */
const MAX_PAGES_LISTED = 100_000;

function observedFound(q: ObservedRequest): Found {
  if (q.type === 'script') return { url: q.url, kind: 'scripts', as: 'script' };
  if (q.type === 'stylesheet') return { url: q.url, kind: isFontCss(q.url) ? 'fonts' : 'styles', as: 'css' };
  return { url: q.url, kind: 'fonts', as: 'asset' };
}

/** Render the sample of pages from an extracted copy of the verified archive (removed afterwards). */
async function observe(
  archivePath: string,
  o: CollectOptions,
  ask: ObserveAsk,
  pages: Array<{ path: string; refs: string[] }>,
  get: (url: string) => Promise<Got>,
) {
  const sample = samplePages(pages, Math.min(ask.maxPages ?? OBSERVE_MAX_PAGES, OBSERVE_MAX_PAGES));
  const dir = await mkdtemp(join(tmpdir(), 'airlock-observe-'));
  try {
    const tree = join(dir, 'site');
    const scan = await extractArchive({ path: archivePath }, tree, { limits: o.limits, signal: o.signal });
    const files = new Map(scan.files.map((f) => [f.path, join(tree, ...f.path.split('/'))]));
    return await observePages(files, sample, {
      chromium: ask.chromium,
      get,
      signal: o.signal,
      maxPages: ask.maxPages ?? OBSERVE_MAX_PAGES,
      pageTimeoutMs: ask.pageTimeoutMs ?? OBSERVE_PAGE_TIMEOUT_MS,
      maxRequests: Math.min(ask.maxRequests ?? OBSERVE_MAX_REQUESTS, OBSERVE_MAX_REQUESTS),
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function kindOfSite(text: string, base: string, byUrl: ReadonlyMap<string, string>, records: ReadonlyMap<string, VendorRecord>): VendorKind {
  for (const r of cssRefs(text)) {
    const u = resolveRef(r.url, base);
    const p = u === null ? undefined : byUrl.get(u);
    if (p !== undefined && records.get(p)?.kind === 'styles') return 'styles';
  }
  return 'fonts';
}
