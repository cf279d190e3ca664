import { createReadStream } from 'node:fs';
import { pipeline } from 'node:stream';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { negotiate } from './encoding.js';
import { evaluate, ifRangeHolds } from './conditional.js';
import { parseRange } from './range.js';
import type { BodyCache } from './body-cache.js';
import { fail } from './send-fail.js';
import { openedAsRecorded, unlinked } from './read-check.js';
import { staticHeaders } from './request-headers.js';
import type { FileEntry, LoadedIndex, Rep } from './version-index.js';

export interface SendContext {
  cache: BodyCache;
  /** Files up to this size are served from the cache; larger ones are streamed from disk. */
  smallMax: number;
  onError: (err: unknown, file: string) => void;
  /** A derived cache file failed its digest check and was removed: rebuild what is missing. */
  onDamaged?: () => void;
  /** A file the version's index names is gone (removed while served): is the version itself? */
  onMissing?: () => void;
}

/** Answer GET/HEAD for one file entry: negotiation, conditionals, Range, then the bytes. */
export function sendFile(req: IncomingMessage, res: ServerResponse, idx: LoadedIndex, entry: FileEntry, head: boolean, ctx: SendContext, status = 200): void {
  if (entry.resolve !== null) {
    // A page still being transformed: wait for it (built ahead of the background queue); never the original.
    entry.resolve().then(
      (e) => sendFile(req, res, idx, e, head, ctx, status),
      (err: unknown) => fail(res, ctx, err, entry.path, idx.base),
    );
    return;
  }
  const h = staticHeaders(req);
  const range = head || status !== 200 ? undefined : h.range;
  let rep = entry.identity;
  if (range === undefined && (entry.br !== null || entry.gzip !== null)) {
    const c = negotiate(h['accept-encoding'], entry.has, entry.gzip !== null && entry.gzip.dynamic);
    if (c === 'br') rep = entry.br!;
    else if (c === 'gzip') rep = entry.gzip!;
  }
  if (status === 200 && (h['if-none-match'] ?? h['if-modified-since'] ?? h['if-match'] ?? h['if-unmodified-since']) !== undefined) {
    const v = { etag: rep.etag, lastModifiedSec: entry.lastModifiedSec };
    const p = evaluate(h, v);
    if (p === 'not-modified') {
      res.writeHead(304, rep.notModified);
      res.end();
      return;
    }
    if (p === 'failed') {
      res.writeHead(412, [...idx.base, 'Content-Type', 'text/plain; charset=utf-8', 'Content-Length', '20']);
      res.end(head ? undefined : 'Precondition Failed\n');
      return;
    }
  }
  if (range !== undefined && ifRangeHolds(h['if-range'], { etag: rep.etag, lastModifiedSec: entry.lastModifiedSec })) {
    const r = parseRange(range, rep.size);
    if (r.kind === 'unsatisfiable') {
      res.writeHead(416, [...idx.base, 'Content-Range', `bytes */${rep.size}`, 'Content-Type', 'text/plain; charset=utf-8', 'Content-Length', '32']);
      res.end('Requested Range Not Satisfiable\n');
      return;
    }
    if (r.kind === 'range') {
      const len = r.end - r.start + 1;
      const headers = [...rep.ranged, 'Content-Range', `bytes ${r.start}-${r.end}/${rep.size}`, 'Content-Length', String(len)];
      sendBytes(res, idx, rep, 206, headers, false, ctx, r.start, r.end);
      return;
    }
  }
  sendBytes(res, idx, rep, status, status === 200 ? rep.headers : withoutValidators(rep.headers), head, ctx);
}

/** An error page (404.html) must not carry the page's validators: a 404 is not cacheable as that file. */
function withoutValidators(h: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < h.length; i += 2) {
    const k = h[i]!;
    if (k === 'ETag' || k === 'Last-Modified' || k === 'Accept-Ranges') continue;
    out.push(k, k === 'Cache-Control' ? 'no-cache' : h[i + 1]!);
  }
  return out;
}

function sendBytes(
  res: ServerResponse,
  idx: LoadedIndex,
  rep: Rep,
  status: number,
  headers: string[],
  head: boolean,
  ctx: SendContext,
  start = 0,
  end = rep.size - 1,
): void {
  const base = idx.base;
  if (rep.dynamic) return sendDynamic(res, base, rep, status, headers, head, ctx);
  const whole = start === 0 && end === rep.size - 1;
  const reply = (buf: Buffer) => {
    res.writeHead(status, headers);
    res.end(head ? undefined : whole ? buf : buf.subarray(start, end + 1));
  };
  const file = rep.file;
  if (head) {
    res.writeHead(status, headers);
    res.end();
    return;
  }
  if (rep.size <= ctx.smallMax) {
    const buf = ctx.cache.get(file);
    if (buf !== undefined) return reply(buf);
    // Bytes no digest checks (a compressed variant) are read only from inside the version's folder.
    const read = rep.digest !== null ? ctx.cache.load(file, rep.digest, rep.size) : unlinked(idx, file).then(() => ctx.cache.load(file, null, rep.size));
    read.then(reply, (err: unknown) => fail(res, ctx, err, file, base, rep.verify !== null));
    return;
  }
  if (rep.size === 0) return reply(Buffer.alloc(0));
  // Large: streamed with backpressure (pipeline pauses the file when the socket is full), from
  // inside the version's folder and of the size its index records (read-check.ts): no digest
  // checks it. Headers go out only once the file is open and checked, so a failure is a clean answer.
  unlinked(idx, file).then(
    () => {
      const stream = createReadStream(file, { start, end, highWaterMark: 64 * 1024 });
      const early = (err: unknown) => fail(res, ctx, err, file, base, rep.verify !== null);
      stream.once('error', early);
      stream.once('open', (fd) => {
        openedAsRecorded(fd, file, rep.size).then(
          () => {
            stream.off('error', early);
            // The reader may have gone while the file opened: piping into a destroyed response throws.
            if (res.destroyed) return void stream.destroy();
            res.writeHead(status, headers);
            pipeline(stream, res, (err) => {
              if (err && (err as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') ctx.onError(err, file);
            });
          },
          (err: unknown) => {
            stream.destroy();
            early(err);
          },
        );
      });
      res.once('close', () => stream.destroy());
    },
    (err: unknown) => fail(res, ctx, err, file, base, false),
  );
}

/**
 * A body compressed on request (compress-now.ts; never ranged: ranges take identity): from memory
 * with its length once made, else streamed from the one flight making it. Headers go out with the
 * first chunk, so a source that cannot be read still gets a clean 500. A reader that hangs up is
 * only unsubscribed: nothing is piped into its response, so nothing writes after it is gone.
 */
function sendDynamic(res: ServerResponse, base: string[], rep: Rep, status: number, headers: string[], head: boolean, ctx: SendContext): void {
  const got = res.destroyed ? undefined : ctx.cache.compressed(rep.key, rep.file, rep.coding!, rep.size, head, rep.source);
  if (Buffer.isBuffer(got)) {
    res.writeHead(status, [...headers, 'Content-Length', String(got.length)]);
    res.end(head ? undefined : got);
    return;
  }
  if (got === null) {
    // HEAD before the body exists: its length is not known yet (a GET now is chunked too)
    res.writeHead(status, headers);
    res.end();
    return;
  }
  if (got === undefined) return; // the reader is gone already: nothing started, no 'close' to wait for
  let started = false;
  const listener = (chunk: Buffer | null, err?: unknown) => {
    if (res.destroyed) return;
    if (err !== undefined) return fail(res, ctx, err, rep.file, base);
    if (!started) {
      started = true;
      res.writeHead(status, headers);
    }
    if (chunk === null) res.end();
    else res.write(chunk);
  };
  got.subscribe(listener);
  res.once('close', () => got.unsubscribe(listener));
}
