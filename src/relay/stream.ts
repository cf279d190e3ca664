import type { Dispatcher } from 'undici';

/**
 * A web ReadableStream over the upstream body that moves each chunk to the browser as soon as it
 * arrives: highWaterMark 0 and one read per pull, so nothing is gathered here (an SSE answer must
 * reach the reader token by token). Cancelling it (the browser went away) aborts the upstream call.
 * An SSE stream that breaks mid-way ends with a UI-message `error` chunk instead of a torn
 * connection, so the page can say what happened.
 */
export function passThrough(body: Dispatcher.ResponseData['body'], abort: AbortController, sse: boolean): ReadableStream<Uint8Array> {
  const it = body[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return new ReadableStream<Uint8Array>(
    {
      async pull(ctrl) {
        try {
          const r = await it.next();
          if (r.done) ctrl.close();
          else ctrl.enqueue(new Uint8Array(r.value.buffer, r.value.byteOffset, r.value.byteLength));
        } catch {
          if (abort.signal.aborted) return ctrl.close();
          if (!sse) return ctrl.error(new Error('upstream answer broke off'));
          ctrl.enqueue(Buffer.from(`data: ${JSON.stringify({ type: 'error', errorText: 'the assistant service broke off the answer' })}\n\n`));
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
