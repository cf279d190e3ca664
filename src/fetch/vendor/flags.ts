import { UsageError } from '../../errors.js';
import type { VendorCollector, VendorKind } from '../../package/index.js';
import { VENDOR_KINDS } from '../../package/vendor.js';
import type { ArchiveLimits } from '../../archive/index.js';
import type { ObserveAsk } from './collect.js';
import { DEFAULT_CHROMIUM } from './chromium.js';
import type { ObserveReport } from './observe.js';

/**
 * The --vendor flags of `fetch` and `pack`, checked before any work, and the collector they run:
 * light on purpose, so that a command without --vendor never loads the vendoring machinery.
 */

export function parseKinds(spec: string): Set<VendorKind> {
  const kinds = new Set<VendorKind>();
  for (const k of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!(VENDOR_KINDS as readonly string[]).includes(k))
      throw new UsageError(`--vendor: unknown kind ${JSON.stringify(k)}; the kinds are ${VENDOR_KINDS.join(', ')}`, { subject: '--vendor' });
    kinds.add(k as VendorKind);
  }
  if (kinds.size === 0) throw new UsageError('--vendor needs at least one kind: fonts, styles or scripts', { subject: '--vendor' });
  return kinds;
}

/** `--vendor-mirror https://fonts.googleapis.com=http://127.0.0.1:8080` → [origin, base]. */
export function parseMirror(spec: string): [string, string] {
  const eq = spec.indexOf('=');
  const bad = (why: string) =>
    new UsageError(
      `--vendor-mirror ${JSON.stringify(spec)}: ${why}; expected https://ORIGIN=URL, e.g. https://fonts.googleapis.com=https://cdn-mirror.corp.example/fonts.googleapis.com`,
      { subject: '--vendor-mirror' },
    );
  if (eq <= 0) throw bad('no "="');
  let from: URL;
  let to: URL;
  try {
    from = new URL(spec.slice(0, eq));
    to = new URL(spec.slice(eq + 1));
  } catch {
    throw bad('not two URLs');
  }
  if (from.protocol !== 'https:' || from.pathname !== '/' || from.search || from.username || from.password) throw bad('the left side must be an https origin');
  if ((to.protocol !== 'https:' && to.protocol !== 'http:') || to.search || to.hash || to.username || to.password)
    throw bad('the right side must be an http(s) URL without query or credentials');
  return [from.origin, to.href.replace(/\/$/, '')];
}

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
    // Loaded only when --vendor is given: the scan, the HTTP client and the HTML rewriter.
    const { BROWSER_UA, collectVendored } = await import('./collect.js');
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
