import { UsageError } from '../errors.js';
import { ANALYTICS_VENDORS, type AnalyticsVendor } from './analytics.js';
import { featuresScript } from './inject.js';
import type { ResolvedFeatures } from './resolve.js';

export interface CspOptions {
  /** Upstream origins the browser calls directly when the assistant / search is on and NOT relayed. */
  assistantOrigins?: readonly string[];
  searchOrigins?: readonly string[];
  /** The API playground's target servers (in-network APIs in an air-gapped site). */
  playgroundOrigins?: readonly string[];
  /** Hashes of the page's kept inline scripts (`'sha256-…'` or bare base64 of sha256). */
  scriptHashes?: readonly string[];
  styleHashes?: readonly string[];
  /**
   * Style policy. Default false: `style-src 'self' 'unsafe-inline'`, because exported React sites
   * carry `style="…"` attributes in their server-rendered HTML and CSS-in-JS adds `<style>`
   * elements at run time — neither can be hashed ahead of time, and blocking them breaks the
   * layout. Inline CSS runs no code, and the CSS side channels (url(), @import, @font-face) stay
   * bound by img-src/font-src/style-src 'self', so nothing leaves the origin through it.
   * true: `style-src 'self'` + styleHashes (browsers ignore 'unsafe-inline' next to a hash).
   * Scripts are NEVER allowed by 'unsafe-inline', only by hash.
   */
  strictStyles?: boolean;
  vendors?: readonly AnalyticsVendor[];
}

// scheme://host[:port] with an optional leading "*." label wildcard (CSP3 host-source). No path,
// quotes, spaces, commas or semicolons: a configured value must never add or end a directive.
const ORIGIN = /^(https?|wss?):\/\/((\*\.)?[a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/;
const HASH_SOURCE = /^'sha(256|384|512)-[A-Za-z0-9+/]+={0,2}'$/;
const BARE_SHA256 = /^[A-Za-z0-9+/]{43}=$/;

function origins(list: readonly string[] | undefined, what: string): string[] {
  return (list ?? []).map((o) => {
    const v = o.trim().toLowerCase().replace(/\/$/, '');
    if (!ORIGIN.test(v)) {
      throw new UsageError(`${what}: ${JSON.stringify(o)} is not an origin (scheme://host[:port])`, { subject: o }, 'AIRLOCK_BAD_ORIGIN');
    }
    return v;
  });
}

function hashes(list: readonly string[] | undefined): string[] {
  return (list ?? []).map((h) => {
    if (HASH_SOURCE.test(h)) return h;
    if (BARE_SHA256.test(h)) return `'sha256-${h}'`;
    throw new UsageError(`not a CSP hash source: ${JSON.stringify(h)}`, { subject: h }, 'AIRLOCK_BAD_HASH');
  });
}

const uniq = (xs: string[]) => [...new Set(xs)];

/**
 * The page's Content-Security-Policy for a feature set (the deployment
 * matrix): the page may connect only to its own origin plus the origins of features that are
 * on; third-party script origins only when analytics is on. With the defaults of air-gapped
 * every fetch directive is 'self' (plus data: for images/fonts): nothing but the own origin.
 * Only the api-playground, if an operator enables it there, adds its configured origins.
 */
export function cspFor(resolved: ResolvedFeatures, o: CspOptions = {}): string {
  const f = resolved.features;
  const vendors = f.analytics ? (o.vendors ?? ANALYTICS_VENDORS) : [];
  const script = uniq(["'self'", featuresScript(resolved).cspSource, ...hashes(o.scriptHashes), ...vendors.flatMap((v) => v.script)]);
  const style = o.strictStyles ? uniq(["'self'", ...hashes(o.styleHashes)]) : ["'self'", "'unsafe-inline'"];
  // Validate every configured origin, also of features that are off: a bad value is a config error.
  const search = origins(o.searchOrigins, 'search origin');
  const assistant = origins(o.assistantOrigins, 'assistant origin');
  const playground = origins(o.playgroundOrigins, 'api-playground origin');
  const connect = uniq([
    "'self'",
    ...(f.search ? search : []),
    ...(f.assistant ? assistant : []),
    ...(f.apiPlayground ? playground : []),
    ...vendors.flatMap((v) => v.connect),
  ]);
  const img = uniq(["'self'", 'data:', ...vendors.flatMap((v) => v.img)]);
  return [
    "default-src 'self'",
    `script-src ${script.join(' ')}`,
    `style-src ${style.join(' ')}`,
    `img-src ${img.join(' ')}`,
    "font-src 'self' data:",
    `connect-src ${connect.join(' ')}`,
    "frame-ancestors 'self'",
    "base-uri 'self'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}
