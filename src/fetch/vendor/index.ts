import { UsageError } from '../../errors.js';
import type { VendorCollector } from '../../package/index.js';
import type { ArchiveLimits } from '../../archive/index.js';
import type { VendorKind } from '../../package/index.js';
import { BROWSER_UA, collectVendored, parseKinds, type ObserveAsk } from './collect.js';
import { DEFAULT_CHROMIUM } from './chromium.js';
import type { ObserveReport } from './observe.js';
import { parseMirror } from './get.js';

export { collectVendored, parseKinds, extensionOf, FONT_CSS_HOSTS, BROWSER_UA } from './collect.js';
export { cssRefs, rewriteCss, resolveRef } from './css.js';
export { parseMirror, vendorGet, target } from './get.js';
export { observePages, samplePages, type ObserveReport } from './observe.js';
export { CHROMIUM_ARGS, DEFAULT_CHROMIUM } from './chromium.js';

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
  /** `--vendor-observe`: render a sample of the pages in headless Chromium and carry what they load at run time. */
  observe?: ObserveAsk;
}

/** What `--vendor-observe` and `--vendor-chromium` ask for. */
export interface ObserveFlags {
  observe?: boolean;
  chromium?: string;
  env?: NodeJS.ProcessEnv;
}

/** Parse the flags (usage errors, exit 2, before anything runs). */
export function vendorFlags(
  kinds: string | undefined,
  mirrors: readonly string[] | undefined,
  ob: ObserveFlags = {},
): Pick<VendorFlags, 'kinds' | 'mirrors' | 'observe'> | null {
  if (kinds === undefined) {
    if (mirrors && mirrors.length > 0) throw new UsageError('--vendor-mirror needs --vendor', { subject: '--vendor-mirror' });
    if (ob.observe) throw new UsageError('--vendor-observe needs --vendor', { subject: '--vendor-observe' });
    if (ob.chromium !== undefined) throw new UsageError('--vendor-chromium needs --vendor-observe', { subject: '--vendor-chromium' });
    return null;
  }
  if (ob.chromium !== undefined && !ob.observe) throw new UsageError('--vendor-chromium needs --vendor-observe', { subject: '--vendor-chromium' });
  const chromium = ob.chromium ?? (ob.env?.AIRLOCK_CHROMIUM || DEFAULT_CHROMIUM);
  return { kinds: parseKinds(kinds), mirrors: new Map((mirrors ?? []).map(parseMirror)), ...(ob.observe ? { observe: { chromium } } : {}) };
}

/** The --vendor options as a command parsed them. */
export interface VendorArgs {
  vendor?: string;
  'vendor-mirror'?: string[];
  'vendor-observe'?: boolean;
}

/**
 * vendorFlags for `fetch` or `pack`, with the --vendor-observe report kept for the summary
 * (`observed()`) and its line (observeLine) handed to `say` as soon as it comes.
 */
export function vendorAsk(
  command: string,
  v: VendorArgs,
  ob: Omit<ObserveFlags, 'observe'>,
  say: (line: string) => void,
): { asked: ReturnType<typeof vendorFlags>; observed: () => ObserveReport | undefined } {
  const asked = vendorFlags(v.vendor, v['vendor-mirror'], { ...ob, observe: v['vendor-observe'] });
  let observed: ObserveReport | undefined;
  if (asked?.observe)
    asked.observe.onReport = (r) => {
      observed = r;
      say(observeLine(command, r));
    };
  return { asked, observed: () => observed };
}

/** The line `fetch` or `pack` prints about `--vendor-observe`: what it rendered, or why it could not (the static scan still ran). */
export function observeLine(command: string, r: ObserveReport): string {
  if (!r.browser)
    return `airlock ${command}: --vendor-observe: ${r.reason}; carried only what the pages and stylesheets name statically (install chromium, or name it with --vendor-chromium or AIRLOCK_CHROMIUM)`;
  return `airlock ${command}: --vendor-observe: rendered ${r.pages} page(s) in Chromium; ${r.requests} off-origin URL(s) requested${r.timedOut ? `, ${r.timedOut} page(s) stopped at the time limit` : ''}`;
}

/** The collector `fetch` and `pack` run on the verified archive. */
export function vendorCollector(f: VendorFlags): VendorCollector {
  return async (archivePath, scan) => {
    const r = await collectVendored(archivePath, scan.strip, {
      kinds: f.kinds,
      mirrors: f.mirrors,
      timeoutMs: f.timeoutMs ?? 30_000,
      maxRedirects: 5,
      userAgent: BROWSER_UA,
      signal: f.signal,
      limits: f.limits,
      onFile: f.onFile,
      ...(f.observe ? { observe: f.observe } : {}),
    });
    for (const u of r.skipped) f.onSkipped?.(u);
    return r;
  };
}
