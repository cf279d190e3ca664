import { open, readlink, type FileHandle } from 'node:fs/promises';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { describeFsError, faultOf, kindOf, type FileFault } from './fs-words.js';
import { quoted } from './terminal.js';

/**
 * Reading what a user or a store handed us: regular files only, opened non-blocking (a FIFO or a
 * device never hangs the process), type-checked on the open handle, bounded before reading, and
 * every refusal in plain words through the caller's `refuse` (never a raw errno).
 */

export interface RegularFileRule {
  /** The largest file accepted; a bigger one is refused before any byte is read. */
  maxBytes: number;
  /**
   * The error for a file that cannot be used; `why` completes "PATH …" ("is a FIFO (named pipe), not a regular file"),
   * `fault` says which kind of problem it is, for advice.
   */
  refuse: (why: string, fault: FileFault) => Error;
  /** A symbolic link is refused, never followed (a store's own files: a link would lead outside it). */
  noFollow?: boolean;
}

/**
 * The whole content of a regular file a user or a store handed us, bounded before reading.
 * Opened non-blocking, so a FIFO or a device never hangs the process (it is refused from its
 * type); a folder, a symlink loop, a missing file or one larger than `maxBytes` are refused
 * through `rule.refuse` in plain words, never a raw errno.
 */
export async function readRegularFile(path: string, rule: RegularFileRule): Promise<Buffer> {
  const got = await readRegularFileIfExists(path, rule);
  if (got === null) throw rule.refuse(describeFsError({ code: 'ENOENT' }), 'missing');
  return got;
}

/**
 * The streaming variant: a regular file opened read-only and non-blocking (so a FIFO or a device
 * never hangs the process), its type checked on the open handle (no race with a rename), or null
 * when it does not exist. The caller reads it in bounded chunks and closes the handle. Refusals
 * come through `refuse` in plain words, as for readRegularFile.
 */
export async function openRegularFileIfExists(
  path: string,
  refuse: (why: string, fault: FileFault) => Error,
  flags = constants.O_RDONLY,
  mode = 0o644,
): Promise<{ fh: FileHandle; size: number } | null> {
  let fh: FileHandle;
  try {
    fh = await open(path, flags | (constants.O_NONBLOCK ?? 0), mode);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    if ((err as NodeJS.ErrnoException).code === 'ELOOP' && flags & (constants.O_NOFOLLOW ?? 0)) {
      const target = await readlink(path).catch(() => null);
      if (target !== null) throw refuse(`is a symbolic link (to ${quoted(target)}), not a regular file: it is not followed`, 'not-regular');
    }
    throw refuse(describeFsError(err), faultOf(err));
  }
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw refuse(`is ${kindOf(st)}, not a regular file`, st.isDirectory() ? 'folder' : 'not-regular');
    return { fh, size: st.size };
  } catch (err) {
    await fh.close().catch(() => {});
    throw err;
  }
}

/** As readRegularFile, but a missing file is null (for files a store may not have yet). */
export async function readRegularFileIfExists(path: string, rule: RegularFileRule): Promise<Buffer | null> {
  const opened = await openRegularFileIfExists(path, rule.refuse, constants.O_RDONLY | (rule.noFollow ? (constants.O_NOFOLLOW ?? 0) : 0));
  if (opened === null) return null;
  const { fh, size } = opened;
  try {
    if (size > rule.maxBytes) throw rule.refuse(`is ${size} bytes, more than the limit of ${rule.maxBytes}`, 'too-big');
    // Read one byte past its size: a file that grows while being read is refused, not cut.
    const buf = Buffer.allocUnsafe(size + 1);
    let n = 0;
    for (;;) {
      const r = await fh.read(buf, n, buf.length - n, n).catch((err: unknown) => {
        throw rule.refuse(describeFsError(err), faultOf(err));
      });
      if (r.bytesRead === 0) break;
      n += r.bytesRead;
      if (n === buf.length) throw rule.refuse('grew while being read', 'unreadable');
    }
    return buf.subarray(0, n);
  } finally {
    await fh.close();
  }
}

/**
 * readRegularFile for a thread that may block (a worker building one page at a time): the same
 * rules, synchronously. A link, when `noFollow`, is refused without reading where it points.
 */
export function readRegularFileSync(path: string, rule: RegularFileRule): Buffer {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (rule.noFollow ? (constants.O_NOFOLLOW ?? 0) : 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP' && rule.noFollow)
      throw rule.refuse('is a symbolic link, not a regular file: it is not followed', 'not-regular');
    throw rule.refuse(describeFsError(err), faultOf(err));
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw rule.refuse(`is ${kindOf(st)}, not a regular file`, st.isDirectory() ? 'folder' : 'not-regular');
    if (st.size > rule.maxBytes) throw rule.refuse(`is ${st.size} bytes, more than the limit of ${rule.maxBytes}`, 'too-big');
    const buf = Buffer.allocUnsafe(st.size + 1);
    let n = 0;
    for (let r = readSync(fd, buf, 0, buf.length, 0); r > 0; r = readSync(fd, buf, n, buf.length - n, n)) {
      n += r;
      if (n === buf.length) throw rule.refuse('grew while being read', 'unreadable');
    }
    return buf.subarray(0, n);
  } finally {
    closeSync(fd);
  }
}

/**
 * Open a regular file a user or a store handed us for positional reads (a package, a volume),
 * when it is too big to read whole: opened non-blocking, so a FIFO or a device never hangs the
 * open (a FIFO with no writer blocks a plain open forever, in a thread no signal reaches), then
 * type-checked by fstat before any byte is read. Anything else is refused through `refuse` in
 * plain words (as readRegularFile says them); the caller closes the handle.
 */
export async function openRegularFile(path: string, refuse: (why: string, fault: FileFault) => Error): Promise<FileHandle> {
  const opened = await openRegularFileIfExists(path, refuse);
  if (opened === null) throw refuse(describeFsError({ code: 'ENOENT' }), 'missing');
  return opened.fh;
}

/** A refusal for a file that is not a regular file, errno-shaped for callers that tell a missing one apart. */
function plainRefusal(path: string): (why: string) => Error {
  return (why) => Object.assign(new Error(`${path} ${why}`), why === describeFsError({ code: 'ENOENT' }) ? { code: 'ENOENT', path } : { path });
}

/**
 * The sha256 of a file's bytes, streamed (hex). Opened through openRegularFile (non-blocking,
 * type-checked on the handle), so a FIFO or a device is refused through `refuse` in plain words,
 * never waited on or read forever; by default the refusal is an Error saying so (a missing file's
 * carries code ENOENT).
 */
export async function fileSha256(path: string, refuse: (why: string, fault: FileFault) => Error = plainRefusal(path)): Promise<string> {
  const fh = await openRegularFile(path, refuse);
  try {
    const h = createHash('sha256');
    for await (const chunk of fh.createReadStream({ autoClose: false, start: 0 })) h.update(chunk as Buffer);
    return h.digest('hex');
  } catch (err) {
    throw refuse(describeFsError(err), faultOf(err));
  } finally {
    await fh.close();
  }
}
