import { z } from 'zod';
import { MalformedError } from '../../errors.js';
import { CONTROL_CHARS } from '../label.js';
import { checkJsonBounds } from '../json-bounds.js';
import { describeIssues } from '../../upstream/describe.js';
import { parseJsonText } from '../../util/json-text.js';

/**
 * airlock-volumes/1: a package split for media (FAT32 sticks, DVDs). Volume i of n is one file
 *   [fixed header, FIXED bytes][table, tableLength bytes][signature, 0 or 64 bytes][payload]
 * Fixed header (big-endian): magic "AIRLKVOL" (8) · format version u16 · 0 u16 · index u32 (1-based) ·
 * count u32 · tableLength u32 · signatureLength u16 · 0 (6) · package id (32: sha256 of the package's
 * airlock.json). The table — the same bytes in every volume, so any one volume describes the whole
 * set — is JSON (space-padded): {format, packageId, name, packageSize, volumes:[{size, sha256}]},
 * each entry the size and sha256 of that volume's payload; it is signed (raw Ed25519 over its exact
 * bytes) by the package's key. The payloads, concatenated in index order, are the package's bytes.
 */
export const MAGIC = Buffer.from('AIRLKVOL', 'latin1');
export const VOLUME_FORMAT = 1;
export const TABLE_FORMAT = 'airlock-volumes/1';
export const FIXED = 64;
/** Names run .001 … .999; a set beyond that is not a set of media but an attack on our loops. */
export const MAX_VOLUMES = 999;
/** Room per table entry (`{"size":<16 digits>,"sha256":"<64 hex>"}` is ≤ 96) and for the rest. */
const ENTRY_ROOM = 100;
const TABLE_BASE = 512;
export const MAX_NAME = 255;
export const MAX_TABLE_BYTES = TABLE_BASE + MAX_NAME + MAX_VOLUMES * ENTRY_ROOM;
export const SIGNATURE_BYTES = 64;

/** The table length reserved for a set of `count` volumes: fixed, so every header is the same size. */
export const tableRoom = (count: number): number => TABLE_BASE + MAX_NAME + count * ENTRY_ROOM;
export const headerSize = (count: number, signed: boolean): number => FIXED + tableRoom(count) + (signed ? SIGNATURE_BYTES : 0);

export interface FixedHeader {
  index: number;
  count: number;
  tableLength: number;
  signatureLength: number;
  packageId: string;
}

export function encodeFixed(h: FixedHeader): Buffer {
  const b = Buffer.alloc(FIXED);
  MAGIC.copy(b, 0);
  b.writeUInt16BE(VOLUME_FORMAT, 8);
  b.writeUInt32BE(h.index, 12);
  b.writeUInt32BE(h.count, 16);
  b.writeUInt32BE(h.tableLength, 20);
  b.writeUInt16BE(h.signatureLength, 24);
  Buffer.from(h.packageId, 'hex').copy(b, 32);
  return b;
}

export const isVolumeHead = (head: Buffer): boolean => head.length >= MAGIC.length && head.subarray(0, MAGIC.length).equals(MAGIC);

const bad = (subject: string, why: string) => new MalformedError('AIRLOCK_VOLUME_HEADER', `volume ${subject}: ${why}`, { subject });

/** Parse and bound the fixed header (pure). Every field is checked before anything is read on its word. */
export function decodeFixed(b: Buffer, subject: string): FixedHeader {
  if (b.length < FIXED) throw bad(subject, `is ${b.length} bytes, shorter than a volume header (${FIXED})`);
  if (!isVolumeHead(b)) throw bad(subject, 'is not an airlock volume (no AIRLKVOL magic)');
  const version = b.readUInt16BE(8);
  if (version !== VOLUME_FORMAT) throw bad(subject, `has volume format ${version}; this airlock reads format ${VOLUME_FORMAT}`);
  const index = b.readUInt32BE(12);
  const count = b.readUInt32BE(16);
  const tableLength = b.readUInt32BE(20);
  const signatureLength = b.readUInt16BE(24);
  if (b.readUInt16BE(10) !== 0 || !b.subarray(26, 32).every((x) => x === 0)) throw bad(subject, 'has non-zero reserved header bytes');
  if (count < 1 || count > MAX_VOLUMES) throw bad(subject, `claims a set of ${count} volumes (1..${MAX_VOLUMES})`);
  if (index < 1 || index > count) throw bad(subject, `claims to be volume ${index} of ${count}`);
  if (tableLength !== tableRoom(count)) throw bad(subject, `has a volume table of ${tableLength} bytes; a set of ${count} has ${tableRoom(count)}`);
  if (signatureLength !== 0 && signatureLength !== SIGNATURE_BYTES)
    throw bad(subject, `has a ${signatureLength}-byte table signature (0 or ${SIGNATURE_BYTES})`);
  return { index, count, tableLength, signatureLength, packageId: b.subarray(32, 64).toString('hex') };
}

const HEX64 = /^[0-9a-f]{64}$/;
export const TableSchema = z
  .object({
    format: z.literal(TABLE_FORMAT),
    packageId: z.string().regex(HEX64),
    // A file name, never a path: it is joined onto the folders searched for the other volumes.
    name: z
      .string()
      .min(1)
      .max(MAX_NAME)
      .refine((n) => !/[/\\]/.test(n) && !CONTROL_CHARS.test(n) && n !== '.' && n !== '..', 'must be a file name'),
    packageSize: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    volumes: z
      .array(z.object({ size: z.number().int().positive().max(Number.MAX_SAFE_INTEGER), sha256: z.string().regex(HEX64) }).strict())
      .min(1)
      .max(MAX_VOLUMES),
  })
  .strict();
export type VolumeTable = z.infer<typeof TableSchema>;

/** Table bytes padded with spaces to exactly `room` (JSON allows trailing whitespace). */
export function encodeTable(t: VolumeTable, room: number): Buffer {
  const json = Buffer.from(JSON.stringify(t), 'utf8');
  if (json.length > room) throw new Error(`volume table of ${json.length} bytes exceeds its room of ${room}`);
  return Buffer.concat([json, Buffer.alloc(room - json.length, 0x20)]);
}

/** Parse the (already size-bounded) table and hold it to the fixed header it came with (pure). */
export function decodeTable(bytes: Buffer, fixed: FixedHeader, subject: string): VolumeTable {
  // Our table is flat (depth 3); anything deeper is hostile and never reaches the schema walk.
  checkJsonBounds(bytes, { maxBytes: MAX_TABLE_BYTES, maxDepth: 4 }, `the volume table of ${subject}`);
  const raw = parseJsonText(
    bytes,
    (why) => new MalformedError('AIRLOCK_VOLUME_TABLE', `volume ${subject}: the volume table ${why}`, { subject }),
    'a volume table',
  );
  const r = TableSchema.safeParse(raw);
  if (!r.success)
    throw new MalformedError('AIRLOCK_VOLUME_TABLE', `volume ${subject}: invalid volume table: ${describeIssues(r.error.issues, 3).join('; ')}`, { subject });
  const t = r.data;
  if (t.volumes.length !== fixed.count)
    throw new MalformedError('AIRLOCK_VOLUME_TABLE', `volume ${subject}: the header says ${fixed.count} volumes but the table lists ${t.volumes.length}`, {
      subject,
    });
  if (t.packageId !== fixed.packageId)
    throw new MalformedError('AIRLOCK_VOLUME_TABLE', `volume ${subject}: the header's package id differs from the table's`, { subject });
  if (t.volumes.reduce((n, v) => n + v.size, 0) !== t.packageSize)
    throw new MalformedError('AIRLOCK_VOLUME_TABLE', `volume ${subject}: the volume sizes do not add up to the package size ${t.packageSize}`, { subject });
  return t;
}

/** `NAME.airlock.001` … (three digits; the set is at most 999). */
export const volumeName = (pkgName: string, index: number): string => `${pkgName}.${String(index).padStart(3, '0')}`;
/** The package name and index a volume's file name carries, or null when renamed. */
export function parseVolumeName(file: string): { base: string; index: number } | null {
  const m = /^(.+)\.(\d{3})$/.exec(file);
  return m ? { base: m[1]!, index: Number(m[2]) } : null;
}
