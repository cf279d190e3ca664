import { UsageError } from '../../errors.js';
import type { VendorCollector } from '../../package/index.js';
import type { ArchiveLimits } from '../../archive/index.js';
import type { VendorKind } from '../../package/index.js';
import { BROWSER_UA, collectVendored, parseKinds } from './collect.js';
import { parseMirror } from './get.js';

export { collectVendored, parseKinds, extensionOf, FONT_CSS_HOSTS, BROWSER_UA } from './collect.js';
export { cssRefs, rewriteCss, resolveRef } from './css.js';
export { parseMirror, vendorGet, target } from './get.js';

/** What `--vendor` and `--vendor-mirror` ask for. */
export interface VendorFlags {
  kinds: Set<VendorKind>;
  mirrors: Map<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  limits?: Partial<ArchiveLimits>;
  /** Each file vendored, and each reference left out (not https, or not a URL vendoring records). */
  onFile?: (url: string, size: number) => void;
  onSkipped?: (url: string) => void;
}

/** Parse the flags (usage errors, exit 2, before anything runs). */
export function vendorFlags(kinds: string | undefined, mirrors: readonly string[] | undefined): Pick<VendorFlags, 'kinds' | 'mirrors'> | null {
  if (kinds === undefined) {
    if (mirrors && mirrors.length > 0) throw new UsageError('--vendor-mirror needs --vendor', { subject: '--vendor-mirror' });
    return null;
  }
  return { kinds: parseKinds(kinds), mirrors: new Map((mirrors ?? []).map(parseMirror)) };
}

/** The collector `fetch` and `pack` run on the verified archive. */
export function vendorCollector(f: VendorFlags): VendorCollector {
  return async (archivePath, scan) => {
    const r = await collectVendored(archivePath, scan.strip, {
      kinds: f.kinds, mirrors: f.mirrors, timeoutMs: f.timeoutMs ?? 30_000, maxRedirects: 5, userAgent: BROWSER_UA,
      signal: f.signal, limits: f.limits, onFile: f.onFile,
    });
    for (const u of r.skipped) f.onSkipped?.(u);
    return r;
  };
}
