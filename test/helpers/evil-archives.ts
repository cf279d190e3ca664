/**
 * Builders of hostile (and honest) tar and zip archives, byte by byte, so tests can produce names
 * and records that well-behaved libraries refuse to write: "../" names, NUL bytes, links, devices,
 * lying sizes, pax records, zip local headers that disagree with the central directory.
 * Shared by every module's tests (archive, package, store, fetch). Pure: Buffers in, Buffers out.
 */
import { crc32, deflateRawSync, gzipSync } from 'node:zlib';

// ---------------------------------------------------------------- tar (POSIX ustar, IEEE 1003.1)

export type TarType = '0' | '1' | '2' | '3' | '4' | '5' | '6' | '7' | 'x' | 'g' | 'L' | 'K' | 'S';

export interface TarEntry {
  name: string | Buffer;
  data?: string | Buffer;
  type?: TarType;
  linkname?: string;
  /** Declared size, when it should differ from the data (a lie). */
  size?: number;
  mode?: number;
}

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

/** One 512-byte ustar header with a valid checksum. The name is written raw (NULs and all). */
export function tarHeader(e: TarEntry): Buffer {
  const h = Buffer.alloc(512);
  const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name);
  if (name.length > 100) throw new Error(`tar name over 100 bytes: use a pax or L record (${name.length})`);
  name.copy(h, 0);
  const data = toBuf(e.data);
  const type = e.type ?? '0';
  h.write(octal(e.mode ?? (type === '5' ? 0o755 : 0o644), 8), 100, 'latin1');
  h.write(octal(0, 8), 108, 'latin1');
  h.write(octal(0, 8), 116, 'latin1');
  h.write(octal(e.size ?? data.length, 12), 124, 'latin1');
  h.write(octal(1_700_000_000, 12), 136, 'latin1');
  h.write(type, 156, 'latin1');
  if (e.linkname) h.write(e.linkname, 157, 'utf8');
  h.write('ustar\u000000', 257, 'latin1');
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (const b of h) sum += b;
  h.write(octal(sum, 7) + ' ', 148, 'latin1');
  return h;
}

function toBuf(d: string | Buffer | undefined): Buffer {
  return d === undefined ? Buffer.alloc(0) : Buffer.isBuffer(d) ? d : Buffer.from(d);
}

function pad512(b: Buffer): Buffer {
  const rest = b.length % 512;
  return rest === 0 ? b : Buffer.concat([b, Buffer.alloc(512 - rest)]);
}

/** A whole tar: each header and its data padded to 512, then two zero blocks unless `end: false`. */
export function tar(entries: TarEntry[], opts: { end?: boolean } = {}): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) parts.push(tarHeader(e), pad512(toBuf(e.data)));
  if (opts.end !== false) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A pax extended header ('x') whose records apply to the next entry (POSIX pax "length key=value\n"). */
export function pax(records: Record<string, string>, name = 'PaxHeader'): TarEntry {
  let body = '';
  for (const [k, v] of Object.entries(records)) {
    const rest = ` ${k}=${v}\n`;
    let len = Buffer.byteLength(rest) + 1;
    while (String(len).length + Buffer.byteLength(rest) !== len) len = String(len).length + Buffer.byteLength(rest);
    body += `${len}${rest}`;
  }
  return { name, type: 'x', data: body };
}

export function tgz(entries: TarEntry[], opts: { end?: boolean } = {}): Buffer {
  return gzipSync(tar(entries, opts));
}

// ---------------------------------------------------------------- zip (PKWARE APPNOTE 6.3)

export interface ZipEntry {
  name: string | Buffer;
  data?: string | Buffer;
  /** 0 stored, 8 deflate (default 8 for files). */
  method?: number;
  /** Full st_mode (type bits included), written as Unix external attributes. */
  unixMode?: number;
  /** Declared uncompressed size in both headers (a lie when it differs from the data). */
  declaredSize?: number;
  /** Local header overrides, to make it disagree with the central directory. */
  localName?: string | Buffer;
  localMethod?: number;
  localSize?: number;
  flags?: number;
  /** Raw extra field bytes for both headers. */
  extra?: Buffer;
  /** Point this entry's local header offset at another entry's (overlapping files). */
  sameDataAs?: number;
}

interface Built {
  e: ZipEntry;
  name: Buffer;
  comp: Buffer;
  crc: number;
  size: number;
  offset: number;
  method: number;
}

/** A whole zip: local headers + data, central directory, end record (zip64 end records past 65,534 entries). No data descriptors. */
export function zip(entries: ZipEntry[], opts: { comment?: string; prefix?: Buffer } = {}): Buffer {
  const parts: Buffer[] = [];
  let offset = 0;
  const built: Built[] = [];
  if (opts.prefix) {
    parts.push(opts.prefix);
    offset += opts.prefix.length;
  }
  for (const e of entries) {
    const name = Buffer.isBuffer(e.name) ? e.name : Buffer.from(e.name);
    const data = toBuf(e.data);
    const method = e.method ?? 8;
    const comp = method === 8 ? deflateRawSync(data) : data;
    const b: Built = { e, name, comp, crc: crc32(data), size: e.declaredSize ?? data.length, offset, method };
    if (e.sameDataAs !== undefined) {
      b.offset = built[e.sameDataAs]!.offset;
      built.push(b);
      continue;
    }
    const localName = e.localName === undefined ? name : Buffer.isBuffer(e.localName) ? e.localName : Buffer.from(e.localName);
    const lh = Buffer.alloc(30);
    lh.writeUInt32LE(0x04034b50, 0);
    lh.writeUInt16LE(20, 4);
    lh.writeUInt16LE(e.flags ?? 0x0800, 6);
    lh.writeUInt16LE(e.localMethod ?? method, 8);
    lh.writeUInt32LE(b.crc, 14);
    lh.writeUInt32LE(comp.length, 18);
    lh.writeUInt32LE(e.localSize ?? b.size, 22);
    lh.writeUInt16LE(localName.length, 26);
    const extra = e.extra ?? Buffer.alloc(0);
    lh.writeUInt16LE(extra.length, 28);
    parts.push(lh, localName, extra, comp);
    offset += 30 + localName.length + extra.length + comp.length;
    built.push(b);
  }
  const cdStart = offset;
  for (const b of built) {
    const ch = Buffer.alloc(46);
    ch.writeUInt32LE(0x02014b50, 0);
    ch.writeUInt16LE(b.e.unixMode === undefined ? 20 : (3 << 8) | 20, 4);
    ch.writeUInt16LE(20, 6);
    ch.writeUInt16LE(b.e.flags ?? 0x0800, 8);
    ch.writeUInt16LE(b.method, 10);
    ch.writeUInt32LE(b.crc, 16);
    ch.writeUInt32LE(b.comp.length, 20);
    ch.writeUInt32LE(b.size, 24);
    ch.writeUInt16LE(b.name.length, 28);
    const extra = b.e.extra ?? Buffer.alloc(0);
    ch.writeUInt16LE(extra.length, 30);
    ch.writeUInt32LE(b.e.unixMode === undefined ? 0 : (b.e.unixMode << 16) >>> 0, 38);
    ch.writeUInt32LE(b.offset - (opts.prefix?.length ?? 0), 42);
    parts.push(ch, b.name, extra);
    offset += 46 + b.name.length + extra.length;
  }
  const comment = Buffer.from(opts.comment ?? '');
  // More than 65,535 entries: the counts live in a zip64 end record + locator (APPNOTE 4.3.14-15).
  const zip64 = built.length > 0xfffe;
  if (zip64) {
    const rec = Buffer.alloc(56);
    rec.writeUInt32LE(0x06064b50, 0);
    rec.writeBigUInt64LE(44n, 4);
    rec.writeUInt16LE((3 << 8) | 45, 12);
    rec.writeUInt16LE(45, 14);
    rec.writeBigUInt64LE(BigInt(built.length), 24);
    rec.writeBigUInt64LE(BigInt(built.length), 32);
    rec.writeBigUInt64LE(BigInt(offset - cdStart), 40);
    rec.writeBigUInt64LE(BigInt(cdStart - (opts.prefix?.length ?? 0)), 48);
    const loc = Buffer.alloc(20);
    loc.writeUInt32LE(0x07064b50, 0);
    loc.writeBigUInt64LE(BigInt(offset - (opts.prefix?.length ?? 0)), 8);
    loc.writeUInt32LE(1, 16);
    parts.push(rec, loc);
  }
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(zip64 ? 0xffff : built.length, 8);
  end.writeUInt16LE(zip64 ? 0xffff : built.length, 10);
  end.writeUInt32LE(offset - cdStart, 12);
  end.writeUInt32LE(cdStart - (opts.prefix?.length ?? 0), 16);
  end.writeUInt16LE(comment.length, 20);
  parts.push(end, comment);
  return Buffer.concat(parts);
}

/** Unix st_mode values for zip external attributes. */
export const MODE = {
  file: 0o100644,
  dir: 0o040755,
  symlink: 0o120777,
  charDevice: 0o020644,
  blockDevice: 0o060644,
  fifo: 0o010644,
} as const;

// ---------------------------------------------------------------- honest sites

/** A small valid site as tar entries, optionally inside a wrapping folder ("site/"). */
export function siteFiles(prefix = ''): { name: string; data: string }[] {
  return [
    { name: `${prefix}index.html`, data: '<!doctype html><title>Home</title><a href="/guide/start">start</a>' },
    { name: `${prefix}guide/start.html`, data: '<!doctype html><title>Start</title>' },
    { name: `${prefix}_next/static/app.3f2a.js`, data: 'console.log("app")' },
  ];
}

export function siteTar(prefix = '', extra: TarEntry[] = []): Buffer {
  return tar([...extra, ...siteFiles(prefix)]);
}

export function siteZip(prefix = '', extra: ZipEntry[] = []): Buffer {
  return zip([...extra, ...siteFiles(prefix)]);
}
