import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const SITE = fileURLToPath(new URL('../../fixtures/site/', import.meta.url));

/** Every .html page of the committed fixture site, as [relative path, bytes]. */
export function fixturePages(): Array<[string, Buffer]> {
  const out: Array<[string, Buffer]> = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.html')) out.push([relative(SITE, p), readFileSync(p)]);
    }
  };
  walk(SITE);
  return out.sort(([a], [b]) => (a < b ? -1 : 1));
}

/** Independent of src/: the CSP3 hash source of an inline element's text. */
export function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text.replace(/\r\n?/g, '\n'), 'utf8').digest('base64')}'`;
}

/** Inline <script> elements of a (small, test) document: attributes text and body. */
export function inlineScripts(html: string): Array<{ attrs: string; text: string }> {
  return [...html.matchAll(/<script(?![^>]*\ssrc=)([^>]*)>([\s\S]*?)<\/script>/gi)].map((m) => ({ attrs: m[1]!, text: m[2]! }));
}

export function metaFlags(html: string): unknown {
  const m = /<meta name="airlock-features" content="([^"]*)">/.exec(html);
  if (!m) throw new Error('no airlock-features meta');
  return JSON.parse(
    m[1]!
      .replace(/&quot;/g, '"')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&amp;/g, '&'),
  );
}

export function scriptFlags(html: string): unknown {
  const m = /<script>window\.__AIRLOCK_FEATURES__=(.*?);<\/script>/.exec(html);
  if (!m) throw new Error('no flags script');
  return JSON.parse(m[1]!);
}

/** A directive's source list from a CSP header value. */
export function directive(csp: string, name: string): string[] {
  const d = csp
    .split(';')
    .map((s) => s.trim().split(/\s+/))
    .find((p) => p[0] === name);
  if (!d) throw new Error(`no ${name} in ${csp}`);
  return d.slice(1);
}
