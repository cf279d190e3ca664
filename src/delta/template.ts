/**
 * A manifest's *digest template*: its exact bytes with every file's sha256 value replaced by 64
 * zeros. A delta carries the target manifest as a fossil delta between the base's template and the
 * target's, so the 64 incompressible hex digits of every changed file do not travel (for an update
 * that touches every page's navigation they were most of the delta); the receiver fills them in
 * from the files it rebuilt and checks the filled bytes against the signed target digest. Both
 * functions are pure; the writer keeps the template only when `fillDigests` gives back the exact
 * manifest bytes (else it carries the manifest whole).
 */
export const ZERO_DIGEST = '0'.repeat(64);

const DIGEST_VALUE = /("sha256"\s*:\s*")([0-9a-f]{64})(")/g;

/**
 * Replace, in order of appearance, the sha256 value that equals the next file's digest (files in
 * manifest order) by zeros; other sha256 values (the archive's) are left as they are. Returns null
 * when not every file's digest was found that way.
 */
export function digestTemplate(bytes: Buffer, files: readonly { sha256: string }[]): Buffer | null {
  let i = 0;
  const text = bytes.toString('utf8').replace(DIGEST_VALUE, (all, pre: string, hex: string, post: string) => {
    if (i < files.length && hex === files[i]!.sha256) {
      i++;
      return pre + ZERO_DIGEST + post;
    }
    return all;
  });
  return i === files.length ? Buffer.from(text, 'utf8') : null;
}

/** The inverse: fill the zeroed sha256 values, in order, with `digests` (one per file, manifest order); null unless there is exactly one zeroed value per digest. */
export function fillDigests(template: Buffer, digests: readonly string[]): Buffer | null {
  let zeros = 0;
  const text = template.toString('utf8').replace(DIGEST_VALUE, (all, pre: string, hex: string, post: string) => {
    if (hex !== ZERO_DIGEST) return all;
    return zeros < digests.length ? pre + digests[zeros++]! + post : (zeros++, all);
  });
  return zeros === digests.length ? Buffer.from(text, 'utf8') : null;
}
