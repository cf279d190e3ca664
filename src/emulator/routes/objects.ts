import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { EmulatorContext } from '../context.js';
import { takeDrop } from '../faults.js';
import { checkPresigned } from '../presign.js';
import { parseRange } from '../range.js';
import { pace, throttledChunkSize } from './pace.js';

/** S3-style XML error (the shape clients and our fetcher see from real object storage). */
function xmlError(res: ServerResponse, status: number, code: string, message: string, method: string): number {
  const body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>\n`;
  res.writeHead(status, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
  res.end(method === 'HEAD' ? undefined : body);
  return status;
}

/**
 * `GET /_objects/<key>?X-Amz-...`: emulated object storage behind presigned links. Checked like S3:
 * the signature covers the method (so HEAD on a GET link is refused), then expiry; a request that
 * also carries an Authorization header is refused as two auth mechanisms (S3 InvalidArgument) —
 * which also proves our fetcher never sends the API key here. Range/If-Range per RFC 9110.
 */
export function handleObject(ctx: EmulatorContext, req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://emulator');
  const key = decodeURIComponent(url.pathname.slice('/_objects/'.length));
  const method = req.method ?? 'GET';
  const rec = ctx.state.recordObjectRequest({ method, path: url.pathname, headers: req.headers, status: 0, bytesSent: 0 });
  rec.status = serve();

  function serve(): number {
    if (req.headers.authorization)
      return xmlError(
        res,
        400,
        'InvalidArgument',
        'Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter or the Authorization header should be specified',
        method,
      );
    const check = checkPresigned(ctx.secret, method, key, url.searchParams, ctx.now());
    if (check === 'bad-signature')
      return xmlError(res, 403, 'SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided.', method);
    if (check === 'expired') {
      return ctx.state.faults.storage === 'gcs'
        ? xmlError(res, 400, 'ExpiredToken', 'The provided token has expired.', method)
        : xmlError(res, 403, 'AccessDenied', 'Request has expired', method);
    }
    const obj = ctx.state.objects.get(key);
    if (!obj) return xmlError(res, 404, 'NoSuchKey', 'The specified key does not exist.', method);
    const f = ctx.state.faults;
    const size = f.truncateObjectAt === null ? obj.size : Math.min(obj.size, f.truncateObjectAt);
    const md5 = f.wrongEtag ? createHash('md5').update(`wrong:${obj.md5}`).digest('hex') : obj.md5;
    const etag = `"${md5}"`;
    const headers: Record<string, string | number> = {
      etag,
      'last-modified': obj.lastModified.toUTCString(),
      'accept-ranges': 'bytes',
      'content-type': obj.contentType,
      'content-disposition': `attachment; filename="${obj.name}"`,
    };
    // If-Range (RFC 9110 §13.1.5): a stale validator means "send the whole new object".
    const ifRange = req.headers['if-range'];
    const rangeOk = !ifRange || ifRange === etag || ifRange === headers['last-modified'];
    const range = rangeOk ? parseRange(req.headers.range, size) : ({ kind: 'full' } as const);
    if (range.kind === 'unsatisfiable') {
      res.writeHead(416, { ...headers, 'content-range': `bytes */${size}`, 'content-length': 0 });
      res.end();
      return 416;
    }
    const [start, end] = range.kind === 'partial' ? [range.start, range.end] : [0, size - 1];
    const status = range.kind === 'partial' ? 206 : 200;
    if (status === 206) headers['content-range'] = `bytes ${start}-${end}/${size}`;
    res.writeHead(status, { ...headers, 'content-length': end - start + 1 });
    if (end < start) {
      res.end();
      return status;
    }
    const body = createReadStream(obj.file, { start, end, highWaterMark: throttledChunkSize(f.throttleBytesPerSec) });
    pace(body, res, { dropAfter: takeDrop(f), bytesPerSec: f.throttleBytesPerSec, onBytes: (n) => (rec.bytesSent += n) });
    return status;
  }
}
