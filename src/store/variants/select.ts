import mime from 'mime-types';

/** Below this size a compressed variant saves less than a packet: not worth a file. */
export const MIN_VARIANT_SIZE = 1024;

/** Text types (html, css, js, json, svg, xml, txt) that compress well; images/fonts do not. */
export function isCompressibleType(type: string): boolean {
  return /^text\//.test(type) || /^application\/(javascript|json|xml|manifest\+json|ld\+json)$/.test(type) || /\+xml$/.test(type);
}

export interface SiteFile {
  path: string;
  size: number;
  sha256: string;
}

/** The distinct contents (by digest) worth precompressing (pure). */
export function selectForVariants(files: readonly SiteFile[]): SiteFile[] {
  const seen = new Set<string>();
  const out: SiteFile[] = [];
  for (const f of files) {
    if (f.size < MIN_VARIANT_SIZE || seen.has(f.sha256)) continue;
    const type = mime.lookup(f.path);
    if (!type || !isCompressibleType(type)) continue;
    seen.add(f.sha256);
    out.push(f);
  }
  return out;
}
