import { createHash, timingSafeEqual } from 'node:crypto';
import { UsageError } from '../errors.js';
import { readRegularFile } from '../util/fsx.js';

/**
 * The mirror's admin tokens file: one `sha256:<64 lowercase hex>` per line (the SHA-256 of the
 * token's UTF-8 bytes), `#` comments and blank lines allowed. Only hashes are stored, so the file
 * leaks no usable token. Create a line with:
 *   printf 'sha256:%s\n' "$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)" >> mirror-tokens
 * Tokens should start with `svc_` (and not `svc_dsc_`): `airlock fetch` checks the admin key's
 * type before sending it, exactly as it does against the service.
 */
const LINE = /^sha256:([0-9a-f]{64})$/;

export function hashToken(token: string): string {
  return 'sha256:' + createHash('sha256').update(token, 'utf8').digest('hex');
}

export function parseTokens(text: string, file: string): Buffer[] {
  const out: Buffer[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const m = LINE.exec(line);
    // Never echo the line: it may be a token pasted in clear by mistake.
    if (!m)
      throw new UsageError(`${file}:${i + 1}: not a token hash; expected sha256:<64 lowercase hex> (see docs/mirror.md)`, { subject: `${file}:${i + 1}` });
    out.push(Buffer.from(m[1]!, 'hex'));
  });
  if (out.length === 0) throw new UsageError(`${file} holds no token hashes: the mirror would refuse every request`, { subject: file });
  return out;
}

/** A line is 72 bytes: 1 MiB holds some 14,000 hashes, far more than any mirror hands out. */
export const TOKENS_FILE_MAX_BYTES = 1024 * 1024;

/** The tokens file: a regular file only (opened non-blocking, so a FIFO never hangs the start), bounded before reading. */
export async function loadTokens(file: string): Promise<Buffer[]> {
  const bytes = await readRegularFile(file, {
    maxBytes: TOKENS_FILE_MAX_BYTES,
    refuse: (why) => new UsageError(`mirror tokens file ${file} ${why}`, { subject: file }, 'AIRLOCK_MIRROR_TOKENS'),
  });
  return parseTokens(bytes.toString('utf8'), file);
}

export type TokenCheck = 'ok' | 'missing' | 'wrong';

/**
 * Bearer token (RFC 6750 §2.1) against the stored hashes. Hashing first makes every comparison
 * 32 bytes against 32 bytes, so timingSafeEqual applies and the token's length does not leak;
 * every stored hash is compared (no early exit) so the position of a match does not leak either.
 */
export function checkBearer(header: string | undefined, hashes: readonly Buffer[]): TokenCheck {
  const m = /^Bearer[ ]+(\S{1,4096})$/.exec(header ?? '');
  if (!m) return 'missing';
  const digest = createHash('sha256').update(m[1]!, 'utf8').digest();
  let ok = false;
  for (const h of hashes) ok = timingSafeEqual(digest, h) || ok;
  return ok ? 'ok' : 'wrong';
}
