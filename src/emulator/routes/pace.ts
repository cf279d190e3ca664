import type { ReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';

/**
 * Copy an object body to the response with the fault switches applied: throttle to `bytesPerSec`,
 * or cut the TCP connection after `dropAfter` bytes (the peer sees a reset mid-body, as with a
 * flaky network). Without switches it is a plain pipe with back-pressure.
 */
export function pace(body: ReadStream, res: ServerResponse, o: { dropAfter: number | null; bytesPerSec: number | null; onBytes: (n: number) => void }): void {
  let sent = 0;
  const started = Date.now();
  const cut = () => {
    body.destroy();
    res.socket?.destroy();
  };
  res.on('close', () => body.destroy());
  body.on('error', () => cut());
  if (o.dropAfter === 0) return cut();
  body.on('data', (chunk: string | Buffer) => {
    let piece = chunk as Buffer;
    if (o.dropAfter !== null && sent + piece.length >= o.dropAfter) piece = piece.subarray(0, o.dropAfter - sent);
    sent += piece.length;
    o.onBytes(piece.length);
    if (o.dropAfter !== null && sent >= o.dropAfter) {
      // Cut once the bytes reached the kernel, so the client really receives exactly dropAfter bytes.
      body.pause();
      res.write(piece, () => cut());
      return;
    }
    const ok = res.write(piece);
    let waitMs = 0;
    if (o.bytesPerSec) waitMs = Math.max(0, (sent / o.bytesPerSec) * 1000 - (Date.now() - started));
    if (!ok || waitMs > 0) {
      body.pause();
      const resume = () => setTimeout(() => body.resume(), waitMs);
      if (ok) resume();
      else res.once('drain', resume);
    }
  });
  body.on('end', () => res.end());
}
