import { createHash } from 'node:crypto';
import { z } from 'zod';
import { MalformedError } from '../../errors.js';
import { checkJsonBounds } from '../json-bounds.js';
import { HOST_NAME, VERSION_LABEL } from '../label.js';
import { MANIFEST_BOUNDS } from '../manifest.js';

/**
 * A delta package (`*.delta.airlock`): a tar like a package, members in this order:
 *   airlock.json      this delta manifest (format airlock-delta/1)
 *   airlock.json.sig  optional: Ed25519 over airlock.json (same rule as a package)
 *   target.json.gz    gzip of a fossil delta that turns the base's exact manifest bytes into the target
 *                     package's exact manifest bytes (its archive is the canonical bundle.tar); the
 *                     result must have the sha256 `target.manifestSha256` names
 *   target.json.sig   optional: the target manifest's signature, exactly as in the full target package
 *   payload.gz        gzip of the concatenated blobs that `files` points into (offsets before compression)
 * A reader of airlock-package/1 refuses it (format), so an old tool fails closed.
 */
export const DELTA_FORMAT = 'airlock-delta/1';
export const DELTA_MEMBERS = { manifest: 'airlock.json', sig: 'airlock.json.sig', target: 'target.json.gz', targetSig: 'target.json.sig', payload: 'payload.gz' } as const;
/** One patch (fossil delta) or base file read into memory on the receiving side is at most this big; larger files travel whole. */
export const MAX_PATCH_SOURCE = 64 * 1024 * 1024;

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'must be a lowercase hex sha256');
const Size = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** Paths are checked against the target manifest (every op must name one of its files), not here. */
const Path = z.string().min(1).max(4096);

export const DeltaOpSchema = z.discriminatedUnion('kind', [
  z.strictObject({ kind: z.literal('copy'), path: Path, from: Path }),
  z.strictObject({ kind: z.literal('patch'), path: Path, from: Path, offset: Size, length: Size }),
  z.strictObject({ kind: z.literal('whole'), path: Path, offset: Size, length: Size }),
]);
export type DeltaOp = z.infer<typeof DeltaOpSchema>;

export const DeltaManifestSchema = z.looseObject({
  format: z.literal(DELTA_FORMAT),
  domain: z.string().regex(HOST_NAME),
  version: z.string().regex(VERSION_LABEL),
  createdAt: z.iso.datetime({ offset: true }),
  base: z.strictObject({ version: z.string().regex(VERSION_LABEL), manifestSha256: Sha256 }),
  target: z.strictObject({ manifestSha256: Sha256 }),
  payload: z.strictObject({ size: Size, sha256: Sha256, expandedSize: Size }),
  /** How to build every target file that is not the base file at the same path with the same digest. */
  ops: z.array(DeltaOpSchema),
  /** Base paths the target no longer has (informative; checked against the two manifests). */
  removed: z.array(Path),
});
export type DeltaManifest = z.infer<typeof DeltaManifestSchema>;

export const sha256Hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

/** Untrusted delta manifest bytes → exit 4 naming airlock.json (bounded before parsing). */
export function parseDeltaManifest(bytes: Buffer, subject = 'airlock.json'): DeltaManifest {
  checkJsonBounds(bytes, MANIFEST_BOUNDS, subject);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (err) {
    throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} is not UTF-8 JSON: ${(err as Error).message}`, { subject });
  }
  const r = DeltaManifestSchema.safeParse(json);
  if (!r.success) {
    const shown = r.error.issues.slice(0, 5).map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} is not a valid ${DELTA_FORMAT} manifest: ${shown}`, { subject });
  }
  return r.data;
}

export function serializeDeltaManifest(m: DeltaManifest): Buffer {
  return Buffer.from(JSON.stringify(m) + '\n', 'utf8');
}
