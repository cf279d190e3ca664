import { DigestMismatchError, type ErrorCode } from '../errors.js';
import type { PartState } from './attempt.js';
import { md5OfFile } from './digests.js';
import { plainMd5 } from './validators.js';

interface Expect {
  partPath: string;
  expectedSize?: number;
}

function mismatch(code: ErrorCode, what: string, want: string | number, got: string | number, o: Expect): DigestMismatchError {
  return new DigestMismatchError(code, `${what} mismatch for the downloaded archive: expected ${want}, got ${got}`, {
    subject: o.partPath,
    expected: want,
    actual: got,
  });
}

/**
 * The download's own proofs, beyond TLS: the size the service promised (sizeBytes), the size the
 * object host stated, and whatever whole-object digest it stated (plain-MD5 ETag, Repr-Digest /
 * x-amz-checksum-sha256). Any disagreement is a verification failure (exit 4).
 */
export const finalCheck = {
  /** As soon as the object's headers arrive: do not download a gigabyte that is already known to be the wrong size. */
  early(s: PartState, o: Expect): void {
    if (o.expectedSize !== undefined && s.total !== undefined && s.total !== o.expectedSize) {
      throw mismatch('AIRLOCK_SIZE_MISMATCH', 'size', o.expectedSize, s.total, o);
    }
  },

  /** After the last byte: sizes and a stated SHA-256. Returns the SHA-256 (lowercase hex). */
  last(s: PartState, o: Expect): string {
    const sha256 = s.digests.digest();
    for (const [what, want] of [
      ['size (sizeBytes)', o.expectedSize],
      ['size (Content-Length)', s.total],
    ] as const) {
      if (want !== undefined && s.have !== want) throw mismatch('AIRLOCK_SIZE_MISMATCH', what, want, s.have, o);
    }
    if (s.statedSha256 !== undefined && sha256 !== s.statedSha256)
      throw mismatch('AIRLOCK_SHA256_MISMATCH', 'SHA-256 (stated by the server)', s.statedSha256, sha256, o);
    return sha256;
  },

  /** The ETag when it is a plain MD5 (single-part S3 objects; multipart ETags are not digests): read back off this thread. */
  async etag(s: PartState, o: Expect): Promise<string | undefined> {
    const want = plainMd5(s.etag);
    if (want === undefined) return undefined;
    const md5 = await md5OfFile(o.partPath, s.have);
    if (md5 !== want) throw mismatch('AIRLOCK_MD5_MISMATCH', 'MD5 (ETag)', want, md5, o);
    return md5;
  },
};
