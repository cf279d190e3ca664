import type { Coding } from './encoding.js';

/**
 * Response header lists, built once per file and representation when a version is loaded, as
 * the flat `[name, value, name, value]` arrays `res.writeHead` takes: nothing is assembled per
 * request on the hot path.
 */
export type FlatHeaders = string[];

export interface SiteHeaders {
  version: string;
  csp: string;
}

/** Headers on every response served from a version, errors included (the serving rules). */
export function baseHeaders(s: SiteHeaders): FlatHeaders {
  return [
    'X-Airlock-Version',
    s.version,
    'X-Content-Type-Options',
    'nosniff',
    'Referrer-Policy',
    'no-referrer',
    // Clickjacking: legacy header for old browsers, frame-ancestors in the CSP for the rest.
    'X-Frame-Options',
    'SAMEORIGIN',
    'Content-Security-Policy',
    s.csp,
  ];
}

export interface RepHeaderInput {
  base: FlatHeaders;
  contentType: string;
  cacheControl: string;
  lastModified: string;
  etag: string;
  size: number;
  coding: Coding;
  vary: boolean;
}

/** 200 headers, and the validator subset a 304 carries (RFC 9110 §15.4.5). */
export function repHeaders(i: RepHeaderInput): { ok: FlatHeaders; notModified: FlatHeaders; ranged: FlatHeaders } {
  const validators = ['ETag', i.etag, 'Cache-Control', i.cacheControl, 'Last-Modified', i.lastModified];
  const vary = i.vary ? ['Vary', 'Accept-Encoding'] : [];
  const notModified = [...i.base, ...validators, ...vary];
  const common = [...notModified, 'Content-Type', i.contentType];
  // Ranges are served over the identity representation only: offsets then mean the bytes of the
  // file as exported, whatever the client's Accept-Encoding (docs/isolated-side.md, serving rules).
  const ok = [...common, ...(i.coding ? ['Content-Encoding', i.coding] : ['Accept-Ranges', 'bytes']), 'Content-Length', String(i.size)];
  const ranged = [...common, 'Accept-Ranges', 'bytes'];
  return { ok, notModified, ranged };
}
