import type { IncomingMessage } from 'node:http';

/**
 * The request headers the static path looks at, read straight from `req.rawHeaders`: Node builds
 * `req.headers` lazily, and building it (lower-casing every name) is a measurable share of a
 * request that is otherwise a Map lookup and a write.
 */
export interface StaticHeaders {
  range?: string;
  'accept-encoding'?: string;
  'if-none-match'?: string;
  'if-modified-since'?: string;
  'if-match'?: string;
  'if-unmodified-since'?: string;
  'if-range'?: string;
}

const WANTED = new Set(['range', 'accept-encoding', 'if-none-match', 'if-modified-since', 'if-match', 'if-unmodified-since', 'if-range']);

const LISTS = new Set(['accept-encoding', 'if-none-match', 'if-match']);

export function staticHeaders(req: IncomingMessage): StaticHeaders {
  const raw = req.rawHeaders;
  const out: Record<string, string> = {};
  for (let i = 0; i < raw.length; i += 2) {
    const k = raw[i]!;
    const c = k.charCodeAt(0) | 0x20; // ASCII lower-case of the first letter: a, i or r
    if (c !== 97 && c !== 105 && c !== 114) continue;
    const name = k.toLowerCase();
    if (!WANTED.has(name)) continue;
    const prev = out[name];
    // List-valued fields combine (RFC 9110 §5.3); for single-valued ones the first wins.
    out[name] = prev === undefined ? raw[i + 1]! : LISTS.has(name) ? `${prev}, ${raw[i + 1]!}` : prev;
  }
  return out as StaticHeaders;
}
