import { cspFor, type CspOptions } from './csp.js';
import { transformHtmlDetailed, type TransformContext } from './html.js';
import type { ResolvedFeatures } from './resolve.js';

/**
 * The server's per-version glue: transform each page once at load time and remember the hashes
 * of the inline scripts it kept, so that page's CSP admits exactly those and nothing else.
 * A single site-wide policy cannot do this without listing every page's scripts on every page
 * (Next.js App Router exports carry a different inline RSC payload per page).
 * State lives only in this object (one per loaded version); no I/O.
 */
export interface PagePolicy {
  /** The `TransformHtml` hook of src/serve: bytes in, transformed bytes out. */
  transform(html: Buffer, path: string): Promise<Buffer>;
  /** The CSP for a transformed page; for any other path, the policy without page hashes. */
  cspFor(path: string): string;
  /** The CSP for non-HTML responses (and pages never transformed). */
  readonly baseCsp: string;
}

export function createPagePolicy(
  resolved: ResolvedFeatures,
  o: { transform?: Omit<TransformContext, 'features' | 'deployment'>; csp?: Omit<CspOptions, 'scriptHashes' | 'styleHashes'> } = {},
): PagePolicy {
  const baseCsp = cspFor(resolved, o.csp);
  const perPage = new Map<string, string>();
  return {
    baseCsp,
    async transform(html, path) {
      const res = await transformHtmlDetailed(html, { ...o.transform, features: resolved.features, deployment: resolved.deployment });
      perPage.set(path, cspFor(resolved, { ...o.csp, scriptHashes: res.scriptHashes, styleHashes: res.styleHashes }));
      return res.html;
    },
    cspFor: (path) => perPage.get(path) ?? baseCsp,
  };
}
