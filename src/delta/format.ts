import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { MalformedError } from '../errors.js';
import { checkJsonBounds } from '../package/json-bounds.js';
import { parseJsonText } from '../util/json-text.js';
import { DOMAIN, VERSION_LABEL } from '../package/label.js';
import { MANIFEST_BOUNDS } from '../package/manifest.js';
import { describeIssue } from '../upstream/describe.js';

/**
 * A delta package (`*.delta.airlock`): a tar like a package, members in this order:
 *   airlock.json      this delta manifest (format airlock-delta/1), small: it names the other
 *                     members by size and sha256
 *   airlock.json.sig  optional: Ed25519 over airlock.json (same rule as a package)
 *   ops.json.gz       gzip of {ops, removed}: how to build each target file (sha256 in `opsFile`)
 *   target.json.gz    gzip of a fossil delta that turns the base's manifest into the target
 *                     package's (its archive is the canonical bundle.tar). With `target.digests`
 *                     "template" it works on digest templates (template.ts: every file's sha256
 *                     zeroed) and the receiver fills the digests of the files it rebuilt; with
 *                     "inline" on the exact bytes. Either way the result must have the sha256
 *                     `target.manifestSha256` names
 *   target.json.sig   optional: the target manifest's signatures, exactly as in the full target
 *   target.json.sig.2 package (raw 64-byte Ed25519 over the exact target manifest bytes), numbered
 *   …                 without a gap, at most 32 (trust policy: a 2-of-3 policy admits a delta as it
 *                     would the full package; `airlock sign DELTA` adds one)
 *   payload.gz        gzip of the concatenated blobs that the ops point into (offsets before compression)
 * A reader of airlock-package/1 refuses it (format), so an old tool fails closed.
 */
export const DELTA_FORMAT = 'airlock-delta/1';
export const DELTA_MEMBERS = {
  manifest: 'airlock.json',
  sig: 'airlock.json.sig',
  ops: 'ops.json.gz',
  target: 'target.json.gz',
  targetSig: 'target.json.sig',
  payload: 'payload.gz',
} as const;
/** One patch (fossil delta) or base file read into memory on the receiving side is at most this big; larger files travel whole. */
/** target.json.sig, target.json.sig.2, … (as a package's airlock.json.sig.N). */
export const targetSignatureMember = (n: number): string => (n === 1 ? DELTA_MEMBERS.targetSig : `${DELTA_MEMBERS.targetSig}.${n}`);
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

/** airlock.json of a delta package, as carried (the signed part). */
export const DeltaEnvelopeSchema = z.looseObject({
  format: z.literal(DELTA_FORMAT),
  domain: z.string().regex(DOMAIN, 'must be a host name in lower case like docs.example.com'),
  version: z.string().regex(VERSION_LABEL),
  createdAt: z.iso.datetime({ offset: true }),
  base: z.strictObject({ version: z.string().regex(VERSION_LABEL), manifestSha256: Sha256 }),
  target: z.strictObject({ manifestSha256: Sha256, digests: z.enum(['template', 'inline']) }),
  opsFile: z.strictObject({ size: Size, sha256: Sha256, expandedSize: Size }),
  payload: z.strictObject({ size: Size, sha256: Sha256, expandedSize: Size }),
});
export type DeltaEnvelope = z.infer<typeof DeltaEnvelopeSchema>;

/** ops.json.gz, expanded. */
export const DeltaOpsSchema = z.strictObject({
  /** How to build every target file that is not the base file at the same path with the same digest. */
  ops: z.array(DeltaOpSchema),
  /** Base paths the target no longer has (checked against the two manifests). */
  removed: z.array(Path),
});

/** A delta manifest as the code uses it: the envelope with its operations. */
export type DeltaManifest = DeltaEnvelope & z.infer<typeof DeltaOpsSchema>;
/** What a writer gives encodeDeltaManifest (opsFile is computed). */
export type DeltaManifestFields = Pick<DeltaManifest, 'format' | 'domain' | 'version' | 'createdAt' | 'base' | 'target' | 'payload' | 'ops' | 'removed'>;

/**
 * Why zlib refused a member, in words (never zlib's or V8's text): not gzip, damaged, cut short,
 * or expanding past `limit` bytes (maxOutputLength); null when `err` is not zlib's.
 */
export function gunzipProblem(err: unknown, limit?: number): string | null {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError)
    return `expands to more than ${limit === undefined ? 'the limit' : `the ${limit} bytes allowed`}`;
  if (code === 'Z_DATA_ERROR') return 'is not gzip data (or its gzip data is damaged)';
  if (code === 'Z_BUF_ERROR') return 'is cut short (its gzip stream ends early)';
  if (typeof code === 'string' && code.startsWith('Z_')) return 'is not a gzip stream that can be decompressed';
  return null;
}

export const sha256Hex = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');

function parseBounded<T>(bytes: Buffer, schema: z.ZodType<T>, subject: string, what: string): T {
  checkJsonBounds(bytes, MANIFEST_BOUNDS, subject);
  const json = parseJsonText(
    bytes,
    (why) => new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} ${why}`, { subject }),
    `${/^[aeiou]/i.test(what) ? 'an' : 'a'} ${what}`,
  );
  const r = schema.safeParse(json);
  if (!r.success) {
    const shown = r.error.issues
      .slice(0, 5)
      .map((i) => `${i.path.join('.') || '(root)'}: ${describeIssue(i)}`)
      .join('; ');
    throw new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} is not a valid ${what}: ${shown}`, { subject });
  }
  return r.data;
}

/** Untrusted delta manifest bytes → exit 4 naming airlock.json (bounded before parsing). */
export function parseDeltaEnvelope(bytes: Buffer, subject: string = DELTA_MEMBERS.manifest): DeltaEnvelope {
  return parseBounded(bytes, DeltaEnvelopeSchema, subject, `${DELTA_FORMAT} manifest`);
}

/** Untrusted, already gunzipped (bounded) ops.json bytes → exit 4 naming ops.json.gz. */
export function parseDeltaOps(bytes: Buffer, subject: string = DELTA_MEMBERS.ops): z.infer<typeof DeltaOpsSchema> {
  return parseBounded(bytes, DeltaOpsSchema, subject, 'list of delta operations');
}

/** The two members a delta manifest travels as: airlock.json (to sign) and ops.json.gz. */
export function encodeDeltaManifest(m: DeltaManifestFields): { manifestBytes: Buffer; opsGz: Buffer } {
  const opsJson = Buffer.from(JSON.stringify({ ops: m.ops, removed: m.removed }) + '\n', 'utf8');
  const opsGz = gzipSync(opsJson, { level: 9 });
  const envelope: DeltaEnvelope = {
    format: m.format,
    domain: m.domain,
    version: m.version,
    createdAt: m.createdAt,
    base: m.base,
    target: m.target,
    opsFile: { size: opsGz.length, sha256: sha256Hex(opsGz), expandedSize: opsJson.length },
    payload: m.payload,
  };
  return { manifestBytes: Buffer.from(JSON.stringify(envelope) + '\n', 'utf8'), opsGz };
}
