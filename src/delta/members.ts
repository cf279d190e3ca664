import { SpanFile } from '../archive/index.js';
import { inputPath, openInputFile, type PackageInput } from '../package/reader.js';

/** What the delta readers need of an open package: a FileHandle, or a SpanFile over volumes. */
export interface ReadHandle {
  read(b: Buffer, o: number, l: number, p: number): Promise<{ bytesRead: number }>;
  close(): Promise<void>;
}
import { MalformedError } from '../errors.js';
import { BLOCK, MIN_TAIL, checkTail, decodeHeader, padded } from '../package/tar-header.js';

export interface Member {
  name: string;
  offset: number;
  size: number;
}

/** Read `length` bytes at `position` of an open file; exit 4 (truncated) naming `subject` when the file is shorter. */
export async function readExact(fh: ReadHandle, position: number, length: number, fileSize: number, subject: string): Promise<Buffer> {
  if (position + length > fileSize) {
    throw new MalformedError('AIRLOCK_TRUNCATED', `${subject} is truncated: needs bytes ${position}..${position + length} but the file has ${fileSize}`, {
      subject,
    });
  }
  const buf = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) throw new MalformedError('AIRLOCK_TRUNCATED', `${subject} is truncated`, { subject });
    done += bytesRead;
  }
  return buf;
}

export async function openFile(input: PackageInput, what: string): Promise<{ fh: ReadHandle; size: number }> {
  const path = inputPath(input);
  if (typeof input !== 'string') {
    const f = await SpanFile.open(input.spans);
    return { fh: f, size: f.size };
  }
  const fh = await openInputFile(path, what);
  return { fh, size: (await fh.stat()).size };
}

/**
 * The members of one of our own tars (a delta package, a volume), headers only, bounded: at most
 * `names.length` members, each of the allowed names in the allowed order (an optional one may be
 * absent), then nothing but the two end blocks. Bodies are never read here.
 */
export async function readMembers(fh: ReadHandle, fileSize: number, names: { name: string; optional?: boolean }[], what: string): Promise<Map<string, Member>> {
  const out = new Map<string, Member>();
  let pos = 0;
  let want = 0;
  while (want < names.length && pos + BLOCK <= fileSize) {
    const block = await readExact(fh, pos, BLOCK, fileSize, what);
    if (block.every((b) => b === 0)) break;
    const h = decodeHeader(block, pos, what);
    while (want < names.length && names[want]!.name !== h.name && names[want]!.optional) want++;
    if (want >= names.length || names[want]!.name !== h.name) {
      throw new MalformedError(
        'AIRLOCK_PACKAGE_MEMBERS',
        `${what}: unexpected member ${JSON.stringify(h.name)} at byte ${pos}; expected ${names.map((n) => n.name + (n.optional ? ' (optional)' : '')).join(', ')} in that order`,
        { subject: h.name },
      );
    }
    const offset = pos + BLOCK;
    if (offset + h.size > fileSize)
      throw new MalformedError(
        'AIRLOCK_TRUNCATED',
        `${what} is truncated: ${h.name} needs ${h.size} bytes but the file ends ${fileSize - offset} bytes into it`,
        { subject: h.name },
      );
    out.set(h.name, { name: h.name, offset, size: h.size });
    pos = offset + padded(h.size);
    want++;
  }
  const missing = names.find((n) => !n.optional && !out.has(n.name));
  if (missing) throw new MalformedError('AIRLOCK_PACKAGE_MEMBERS', `${what} has no ${missing.name} member`, { subject: missing.name });
  const tail = fileSize - pos;
  if (tail < MIN_TAIL) throw new MalformedError('AIRLOCK_TRUNCATED', `${what} is truncated: the tar end blocks are missing`, { subject: what });
  if (tail > MIN_TAIL + 20 * BLOCK)
    throw new MalformedError('AIRLOCK_PACKAGE_MEMBERS', `${what} has ${tail} bytes after its last member; only the tar end blocks may follow`, {
      subject: `byte ${pos}`,
    });
  checkTail(await readExact(fh, pos, tail, fileSize, what), pos);
  return out;
}
