import type { Dispatcher } from 'undici';

/** The largest answer relayed to a reader: far above any real search answer or assistant reply. */
export const DEFAULT_MAX_ANSWER_BYTES = 16 * 1024 * 1024;

const mib = (n: number) => `${+(n / (1024 * 1024)).toFixed(1)} MiB`;
const sseError = (errorText: string) => Buffer.from(`data: ${JSON.stringify({ type: 'error', errorText })}\n\n`);

/**
 * A web ReadableStream over the upstream body that moves each chunk to the browser as soon as it
 * arrives: highWaterMark 0 and one read per pull, so nothing is gathered here (an SSE answer must
 * reach the reader token by token). Cancelling it (the browser went away) aborts the upstream call.
 * A stream that breaks mid-way, or passes `maxBytes`, ends with a UI-message `error` chunk instead
 * of a torn connection, so the page can say what happened.
 */
export function passThrough(body: Dispatcher.ResponseData['body'], abort: AbortController, maxBytes: number): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let sent = 0;
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctrl) {
        try {
          const r = await it.next();
          if (r.done) return ctrl.close();
          sent += r.value.byteLength;
          if (sent > maxBytes) {
            abort.abort();
            body.destroy();
            ctrl.enqueue(sseError(`the assistant service sent an answer larger than ${mib(maxBytes)}; it was cut there`));
            return ctrl.close();
          }
          ctrl.enqueue(new Uint8Array(r.value.buffer, r.value.byteOffset, r.value.byteLength));
        } catch {
          if (abort.signal.aborted) return ctrl.close();
          ctrl.enqueue(sseError('the assistant service broke off the answer'));
          ctrl.close();
        }
      },
      cancel(reason) {
        abort.abort(reason);
        body.destroy();
      },
    },
    { highWaterMark: 0 },
  );
}

/** A whole (JSON) answer, at most `maxBytes`; the body is destroyed as soon as it passes them. */
export async function readAnswer(
  body: Dispatcher.ResponseData['body'],
  maxBytes: number,
): Promise<{ ok: true; bytes: Uint8Array<ArrayBuffer> } | { ok: false; error: string }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body as AsyncIterable<Buffer>) {
      size += chunk.byteLength;
      if (size > maxBytes) {
        body.destroy();
        return { ok: false, error: `the search service sent an answer larger than ${mib(maxBytes)}` };
      }
      chunks.push(chunk);
    }
  } catch {
    return { ok: false, error: 'the search service broke off the answer' };
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    bytes.set(c, at);
    at += c.byteLength;
  }
  return { ok: true, bytes };
}
