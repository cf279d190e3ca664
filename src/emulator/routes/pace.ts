import type { ReadStream } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

/** Read size for a throttled body: about ten writes a second, so pacing is smooth. */
export function throttledChunkSize(bytesPerSec: number | null): number {
  return bytesPerSec ? Math.max(1, Math.min(256 * 1024, Math.floor(bytesPerSec / 10))) : 256 * 1024;
}

/**
 * Copy an object body to the response with the fault switches applied: throttle to `bytesPerSec`
 * (each piece waits until the average rate allows it), or cut the TCP connection after
 * `dropAfter` bytes (the peer sees the connection end mid-body, as on a flaky network).
 * Without switches it is a plain copy with back-pressure.
 */
export function pace(body: ReadStream, res: ServerResponse, o: { dropAfter: number | null; bytesPerSec: number | null; onBytes: (n: number) => void }): void {
  const cut = () => {
    body.destroy();
    res.socket?.destroy();
  };
  res.on('close', () => body.destroy());
  copy(body, res, o).then(
    (complete) => (complete ? res.end() : cut()),
    () => cut(),
  );
}

/** Resolves true when the whole body was written, false when it was cut on purpose. */
async function copy(
  body: ReadStream,
  res: ServerResponse,
  o: { dropAfter: number | null; bytesPerSec: number | null; onBytes: (n: number) => void },
): Promise<boolean> {
  const started = Date.now();
  let sent = 0;
  if (o.dropAfter === 0) return false;
  for await (const chunk of body) {
    let piece = chunk as Buffer;
    const last = o.dropAfter !== null && sent + piece.length >= o.dropAfter;
    if (last) piece = piece.subarray(0, o.dropAfter! - sent);
    const waitMs = o.bytesPerSec ? ((sent + piece.length) / o.bytesPerSec) * 1000 - (Date.now() - started) : 0;
    if (waitMs > 0) await sleep(waitMs);
    sent += piece.length;
    o.onBytes(piece.length);
    if (last) {
      // Cut once the bytes reached the kernel, so the client really receives exactly dropAfter bytes.
      await new Promise<void>((resolve) => res.write(piece, () => resolve()));
      return false;
    }
    if (!res.write(piece)) {
      // A client that hangs up while we wait for drain must not leave this loop waiting forever.
      await drainOrClose(res);
      if (res.destroyed) return false;
    }
  }
  return true;
}

function drainOrClose(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}
