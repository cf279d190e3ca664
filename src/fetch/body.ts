import { finished } from 'node:stream/promises';
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type { PartSink } from './sink.js';

/** Drop a body we will not read. undici turns a bare destroy() into an 'error' event: swallow it here, we chose to stop. */
export function discard(body: Readable): void {
  body.on('error', () => {});
  body.destroy();
}

/** Drain at most `limit` bytes of an error body (object stores answer errors with a small XML document). */
export async function smallText(body: Readable, limit = 16_384): Promise<string> {
  let text = '';
  for await (const chunk of body) {
    if (text.length < limit) text += (chunk as Buffer).toString('utf8');
    else { discard(body); break; }
  }
  return text.slice(0, limit);
}

/**
 * Copy the body into the sink with backpressure. Unlike pipeline(), a broken source does not
 * destroy the sink: the bytes that did arrive are still written (and hashed) before we return, so
 * a resume starts after them. Returns the source's error (the connection), throws the sink's (the disk).
 */
export async function drainInto(body: Readable, sink: PartSink): Promise<unknown> {
  let broken: unknown;
  try {
    for await (const chunk of body) {
      if (sink.errored) break;
      if (!sink.write(chunk)) await once(sink, 'drain');
    }
  } catch (err) {
    broken = err;
  }
  if (sink.errored) throw sink.errored;
  sink.end();
  await finished(sink);
  return broken;
}
