import type { FileHandle } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { parseRange } from '../serve/range.js';
import { checkLink, type ObjectForm } from './sign.js';
import { packageOf } from './packages.js';
import { readVersion, type MirrorVersion } from './versions.js';
import { openRegularFile } from '../util/fsx.js';

/**
 * `GET /_airlock/objects/<label>/<name>?expires&sig[&format=airlock]`: the mirror's own
 * "presigned object storage". Serves the original export archive byte for byte as a range of the
 * version's package.airlock (or, with format=airlock, the whole signed package), with what a
 * downloader checks: Content-Length, a strong ETag, Repr-Digest (RFC 9530) and
 * x-amz-checksum-sha256 of the whole object, Range/If-Range (RFC 9110 §14). Errors mimic S3.
 */
export interface ObjectDeps {
  store: string;
  secret: Buffer;
  now: () => number;
  onError: (err: unknown) => void;
}

export const PACKAGE_NAME = 'package.airlock';
const PATH = /^\/_airlock\/objects\/([A-Za-z0-9][A-Za-z0-9._-]{0,63})\/([A-Za-z0-9][A-Za-z0-9._-]{0,63})$/;

function xml(res: ServerResponse, status: number, code: string, message: string, head: boolean): void {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>\n`;
  res.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': Buffer.byteLength(body), 'Cache-Control': 'no-store' });
  res.end(head ? undefined : body);
}

interface Obj {
  offset: number;
  size: number;
  sha256: string;
  name: string;
}
function objectOf(v: MirrorVersion, form: ObjectForm, pkgSize: number, pkgSha256: string): Obj {
  return form === 'airlock'
    ? { offset: 0, size: pkgSize, sha256: pkgSha256, name: PACKAGE_NAME }
    : { offset: v.archive.offset, size: v.archive.size, sha256: v.archive.sha256, name: v.archive.name };
}

export async function handleObject(d: ObjectDeps, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://mirror');
  const m = PATH.exec(url.pathname);
  const head = req.method === 'HEAD';
  if (!m) return xml(res, 404, 'NoSuchKey', 'The specified key does not exist.', head);
  const [, label, name] = m as unknown as [string, string, string];
  // A presigned GET link does not sign HEAD (S3 answers 403 too): the service's links refuse it,
  // and a client that works against the mirror must also work against the service.
  if (req.method !== 'GET')
    return xml(res, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.', head);
  const check = checkLink(d.secret, label, name, url.searchParams, d.now());
  if (!check.ok) {
    if (check.why === 'expired') return xml(res, 403, 'AccessDenied', 'Request has expired', false);
    if (check.why === 'malformed') return xml(res, 403, 'AccessDenied', 'Query-string authentication requires the expires and sig parameters', false);
    return xml(res, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.', false);
  }
  const v = await readVersion(d.store, label);
  if (!v) return xml(res, 404, 'NoSuchKey', 'The specified key does not exist.', false);
  let pkg;
  try {
    pkg = await packageOf(d.store, v); // a version imported from a delta has its package built now, once
  } catch (err) {
    d.onError(err);
    return xml(res, 503, 'ServiceUnavailable', `The package of version ${label} cannot be prepared now; try again later.`, false);
  }
  let fh: FileHandle | undefined;
  try {
    // Opened before anything is sent: once open, a prune that deletes the version cannot take
    // the bytes from under this download (the inode lives while the descriptor does). Opened
    // non-blocking and type-checked: a FIFO or a device in the store is no package, never a hang.
    fh = await openRegularFile(pkg.path, (why) => new Error(why));
  } catch {
    fh = undefined;
  }
  if (!fh) return xml(res, 404, 'NoSuchKey', 'The specified key does not exist.', false);
  const pkgSize = (await fh.stat()).size;
  const o = objectOf(v, check.claims.form, pkgSize, pkg.sha256);
  if (o.name !== name || o.offset + o.size > pkgSize) {
    await fh.close();
    return xml(res, 404, 'NoSuchKey', 'The specified key does not exist.', false);
  }
  send(d, req, res, fh, o, label);
}

function send(d: ObjectDeps, req: IncomingMessage, res: ServerResponse, fh: FileHandle, o: Obj, label: string): void {
  // The client may have gone while the version was read and the file opened (a reader's abort, a
  // replica shutting down): pipe into a destroyed response throws ERR_STREAM_UNABLE_TO_PIPE.
  if (res.destroyed) {
    void fh.close();
    return;
  }
  const etag = `"${o.sha256}"`;
  const b64 = Buffer.from(o.sha256, 'hex').toString('base64');
  const headers: Record<string, string | number> = {
    'Content-Type': o.name.endsWith('.zip')
      ? 'application/zip'
      : o.name.endsWith('.airlock') || o.name.endsWith('.tar')
        ? 'application/x-tar'
        : 'application/gzip',
    'Content-Disposition': `attachment; filename="${o.name}"`,
    ETag: etag,
    'Accept-Ranges': 'bytes',
    'Repr-Digest': `sha-256=:${b64}:`,
    'x-amz-checksum-sha256': b64,
    'Cache-Control': 'private, no-store',
    'X-Airlock-Version': label,
  };
  // If-Range with anything but our exact strong ETag means "send it all" (RFC 9110 §13.1.5).
  const ifRange = req.headers['if-range'];
  const r = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, o.size) : ({ kind: 'none' } as const);
  if (r.kind === 'unsatisfiable') {
    void fh.close();
    res.writeHead(416, { ...headers, 'Content-Range': `bytes */${o.size}`, 'Content-Length': 0 });
    res.end();
    return;
  }
  const [start, end] = r.kind === 'range' ? [r.start, r.end] : [0, o.size - 1];
  if (r.kind === 'range') headers['Content-Range'] = `bytes ${start}-${end}/${o.size}`;
  res.writeHead(r.kind === 'range' ? 206 : 200, { ...headers, 'Content-Length': end - start + 1 });
  if (end < start) {
    void fh.close();
    res.end();
    return;
  }
  // Streamed with backpressure: pipeline pauses the file whenever the socket is full.
  const stream = fh.createReadStream({ start: o.offset + start, end: o.offset + end, highWaterMark: 256 * 1024, autoClose: true });
  pipeline(stream, res, (err) => {
    if (err && (err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') d.onError(err);
  });
}
