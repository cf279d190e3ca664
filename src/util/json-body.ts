import { cappedText } from './capped-body.js';
import { firstDuplicateKey } from './json-text.js';
import { quoted } from './terminal.js';

/** Reading an untrusted JSON request body with a hard size cap (pure over a web Request): the relays and local search. */
export const DEFAULT_MAX_BODY_BYTES = 256 * 1024;

export type BodyResult = { ok: true; value: unknown } | { ok: false; status: 400 | 413 | 415; error: string };

/**
 * The JSON body of `req`, refusing more than `max` bytes. The Content-Length is checked first and
 * the stream is counted as it arrives, so a chunked or lying client cannot make us buffer more
 * than the cap (memory exhaustion, CWE-400). Only `application/json` is accepted: a cross-site
 * form can send text/plain without a CORS preflight, and would spend the relay's rate budget
 * from other sites' pages (CSRF); application/json forces a preflight that we never grant.
 */
export async function readJsonBody(req: Request, max = DEFAULT_MAX_BODY_BYTES): Promise<BodyResult> {
  const type = (req.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/json') {
    return { ok: false, status: 415, error: `content-type must be application/json, got ${JSON.stringify(type || '(none)')}` };
  }
  const tooLarge = { ok: false, status: 413, error: `request body larger than ${max} bytes` } as const;
  const declared = Number(req.headers.get('content-length') ?? NaN);
  if (Number.isFinite(declared) && declared > max) return tooLarge;
  let text: string | null;
  try {
    text = await cappedText(req.body, max);
  } catch {
    // The client went away mid-body (ECONNRESET, aborted): routine, said in a word, no stack trace.
    return { ok: false, status: 400, error: 'the request body was cut short (the client went away)' };
  }
  if (text === null) return tooLarge;
  try {
    const value = JSON.parse(text) as unknown;
    const twice = duplicateKeyError(text);
    return twice === null ? { ok: true, value } : { ok: false, status: 400, error: twice };
  } catch {
    // Never the parser's words: they quote the body back.
    return { ok: false, status: 400, error: `request body is not valid JSON (${Buffer.byteLength(text)} bytes)` };
  }
}

/**
 * The refusal of a body (valid JSON) that names a key twice in one object, or null. JSON.parse
 * keeps the last value, a front proxy may take the first: the two would read different requests.
 */
function duplicateKeyError(text: string): string | null {
  const key = firstDuplicateKey(text);
  return key === null ? null : `request body names the key ${quoted(key.slice(0, 200))} twice in one object; send each key once`;
}

/**
 * A request body taken as JSON with no content-type rule (the export API of a mirror and of the
 * emulator, the emulator's controls), read with the same bound as readJsonBody: its value,
 * undefined when the body is empty (the caller's schema refuses that in words), or a 413/400 in
 * words when it is too large, not JSON, or names a key twice.
 */
export async function requestJson(
  req: Request,
  max = DEFAULT_MAX_BODY_BYTES,
): Promise<{ ok: true; value: unknown } | { ok: false; status: 400 | 413; error: string }> {
  const declared = Number(req.headers.get('content-length') ?? NaN);
  const text = Number.isFinite(declared) && declared > max ? null : await cappedText(req.body, max);
  if (text === null) return { ok: false, status: 413, error: `request body larger than ${max} bytes` };
  if (text.trim() === '') return { ok: true, value: undefined };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, status: 400, error: `request body is not valid JSON (${Buffer.byteLength(text)} bytes)` };
  }
  const twice = duplicateKeyError(text);
  return twice === null ? { ok: true, value } : { ok: false, status: 400, error: twice };
}
