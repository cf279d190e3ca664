import { readFile, writeFile } from 'node:fs/promises';
import { BLOCK, encodeHeader, padded } from '../../src/package/tar-header.js';
import { readPackage } from '../../src/package/reader.js';

/** Build raw packages member by member, to make the malformed ones the reader must refuse. */
export interface Member {
  name: string;
  data: Buffer;
}

export function tarMember(m: Member, mtime = new Date('2025-01-15T12:00:00Z')): Buffer {
  return Buffer.concat([encodeHeader(m.name, m.data.length, mtime), m.data, Buffer.alloc(padded(m.data.length) - m.data.length)]);
}

export const tarEnd = (): Buffer => Buffer.alloc(2 * BLOCK);

export async function assemble(path: string, members: Member[]): Promise<void> {
  await writeFile(path, Buffer.concat([...members.map((m) => tarMember(m)), tarEnd()]));
}

/** The members of a well-formed package, in order. */
export async function membersOf(pkg: string): Promise<Member[]> {
  const l = await readPackage(pkg);
  const bytes = await readFile(pkg);
  const out: Member[] = [{ name: 'airlock.json', data: l.manifestBytes }];
  if (l.signature) out.push({ name: 'airlock.json.sig', data: l.signature });
  out.push({ name: l.archive.name, data: bytes.subarray(l.archive.offset, l.archive.offset + l.archive.size) });
  for (const v of l.vendor) out.push({ name: v.name, data: bytes.subarray(v.offset, v.offset + v.size) }); // vendored resources
  return out;
}

/** Flip bits of one byte in place (a transmission error or a tamperer). */
export function flip(buf: Buffer, at: number, mask = 0xff): void {
  buf[at] = buf[at]! ^ mask;
}

/** Recompute a header's checksum after editing it (as an attacker would, so the header still looks valid). */
export function reseal(block: Buffer): Buffer {
  block.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += block[i]!;
  block.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 'latin1');
  return block;
}

/** A base-256 field: 0x80 then the big-endian value. */
export function base256(value: bigint, width: number): Buffer {
  const b = Buffer.alloc(width);
  b[0] = 0x80;
  for (let i = width - 1; i > 0 && value > 0n; i--, value >>= 8n) b[i] = Number(value & 0xffn);
  return b;
}
