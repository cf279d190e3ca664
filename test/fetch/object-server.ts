import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';

/**
 * A tiny object-storage stand-in for the download engine's tests (the emulator is tested
 * separately): presigned-style tokens that expire, strong MD5 ETag, Range + If-Range, and fault
 * switches. It counts every body byte it sends, so tests can prove a resume did not re-download.
 */
export interface ObjectServerOptions {
  body: Buffer;
  etag?: string | null; // default: the plain MD5 ETag; null: none
  /** Per request (0-based): destroy the socket after this many body bytes. */
  dropAfter?: (requestIndex: number) => number | undefined;
  /** Per request: answer this status instead (e.g. 500 burst, 429). */
  statusFor?: (requestIndex: number) => number | undefined;
  retryAfter?: string;
  /** Lie about the length: Content-Length stated for the object (defaults to body.length). */
  statedLength?: number;
  extraHeaders?: Record<string, string>;
  /** Serve a Range request with this start instead of the asked one (a broken server). */
  rangeStartOverride?: number;
  /** Bytes per 50 ms tick; unthrottled when unset. */
  throttleBytesPer50ms?: number;
}

export interface ObjectServer {
  url: string;
  base: string;
  linkFor(token: string): string;
  expireToken(token: string): void;
  requests: Array<{ range?: string; ifRange?: string; authorization?: string; token: string | null; status: number; sent: number }>;
  bytesSent: number;
  options: ObjectServerOptions;
  close(): Promise<void>;
}

export async function startObjectServer(options: ObjectServerOptions): Promise<ObjectServer> {
  const expired = new Set<string>();
  const state = { bytesSent: 0 };
  const requests: ObjectServer['requests'] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const o = options;
    const idx = requests.length;
    const token = new URL(req.url ?? '/', 'http://x').searchParams.get('token');
    const rec = {
      range: req.headers.range,
      ifRange: req.headers['if-range'] as string | undefined,
      authorization: req.headers.authorization,
      token,
      status: 0,
      sent: 0,
    };
    requests.push(rec);
    const send = (status: number, headers: Record<string, string | number>, body?: string) => {
      rec.status = status;
      res.writeHead(status, headers);
      res.end(body);
    };
    if (!token || expired.has(token))
      return send(403, { 'content-type': 'application/xml' }, '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>');
    const forced = o.statusFor?.(idx);
    if (forced) return send(forced, forced === 429 && o.retryAfter ? { 'retry-after': o.retryAfter } : {}, 'fault');
    const etag = o.etag === undefined ? `"${createHash('md5').update(o.body).digest('hex')}"` : o.etag;
    const total = o.statedLength ?? o.body.length;
    const base: Record<string, string | number> = { 'accept-ranges': 'bytes', ...(etag ? { etag } : {}), ...o.extraHeaders };
    let start = 0;
    let status = 200;
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    if (m && (!rec.ifRange || rec.ifRange === etag)) {
      start = Number(m[1]);
      if (start >= total) return send(416, { ...base, 'content-range': `bytes */${total}` });
      status = 206;
      start = o.rangeStartOverride ?? start;
      base['content-range'] = `bytes ${start}-${total - 1}/${total}`;
    }
    const slice = o.body.subarray(start);
    rec.status = status;
    res.writeHead(status, { ...base, 'content-length': total - start });
    const drop = o.dropAfter?.(idx);
    const limit = drop === undefined ? slice.length : Math.min(drop, slice.length);
    let off = 0;
    const step = o.throttleBytesPer50ms ?? 64 * 1024;
    const pump = () => {
      if (res.destroyed) return;
      while (off < limit) {
        const chunk = slice.subarray(off, Math.min(limit, off + step));
        off += chunk.length;
        state.bytesSent += chunk.length;
        rec.sent += chunk.length;
        const ok = res.write(chunk);
        if (o.throttleBytesPer50ms) return void setTimeout(pump, 50);
        if (!ok) return void res.once('drain', pump);
      }
      // end() (not destroy()) so the bytes already written reach the client before the FIN.
      if (drop !== undefined && limit < slice.length) res.socket?.end();
      else res.end();
    };
    pump();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    url: `${base}/bucket/bundle.tar.gz?token=t0&X-Amz-Signature=abc`,
    linkFor: (t) => `${base}/bucket/bundle.tar.gz?token=${t}&X-Amz-Signature=abc`,
    expireToken: (t) => expired.add(t),
    requests,
    get bytesSent() {
      return state.bytesSent;
    },
    options,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
