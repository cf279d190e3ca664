import type { Dispatcher } from 'undici';
import type { HeaderBag } from './validators.js';

/** Where a body goes: `push` copies the chunk (it is a view into undici's parser memory) and says false to stop reading until `onRoom`. */
export interface BodyTarget {
  push(chunk: Buffer): boolean;
  onRoom(resume: () => void, abort: (err: unknown) => void): void;
}

export interface Response {
  status: number;
  /** The status line's reason phrase, as the parser gave it (server text: never printed unescaped). */
  statusText: string | undefined;
  headers: HeaderBag;
  /** Feed the body to `into` with backpressure. Resolves with the connection's error, or undefined when the body ended. */
  pipe(into: BodyTarget): Promise<unknown>;
  /** At most `limit` bytes of the body as text (object stores answer errors with a small XML document). */
  text(limit?: number): Promise<string>;
  /** Drop a body we will not read. */
  discard(): void;
}

export interface GetOptions {
  dispatcher: Dispatcher;
  headers: Record<string, string>;
  signal: AbortSignal;
  bodyTimeout: number;
  headersTimeout: number;
}

/**
 * A GET through undici's dispatch API: body chunks reach the target as Buffers straight from the
 * parser, with no Readable in between (measured: the stream layer and its per-chunk promises cost
 * more CPU than the bytes' trip through the kernel on loopback, bench/fetch.ts). The response is
 * paused until a consumer is attached, so no byte is dropped or buffered in between.
 */
export function get(url: string, o: GetOptions): Promise<Response> {
  const u = new URL(url);
  return new Promise<Response>((resolve, reject) => {
    let ctl: Dispatcher.DispatchController | undefined;
    let target: BodyTarget | undefined;
    let outcome: { err: unknown } | undefined;
    let settle: ((err: unknown) => void) | undefined;
    const finish = (err: unknown) => {
      o.signal.removeEventListener('abort', onAbort);
      if (outcome) return;
      outcome = { err };
      settle?.(err);
    };
    const onAbort = () => ctl?.abort(o.signal.reason instanceof Error ? o.signal.reason : new Error('aborted'));
    const attach = (t: BodyTarget) =>
      new Promise<unknown>((res) => {
        if (outcome) return res(outcome.err);
        settle = res;
        target = t;
        t.onRoom(
          () => ctl?.resume(),
          (err) => ctl?.abort(err instanceof Error ? err : new Error(String(err))),
        );
        ctl?.resume();
      });
    o.dispatcher.dispatch(
      {
        origin: u.origin,
        path: u.pathname + u.search,
        method: 'GET',
        headers: o.headers,
        bodyTimeout: o.bodyTimeout,
        headersTimeout: o.headersTimeout,
      },
      {
        onRequestStart(c) {
          ctl = c;
          if (o.signal.aborted) onAbort();
          else o.signal.addEventListener('abort', onAbort, { once: true });
        },
        onResponseStart(c, status, headers, statusText) {
          if (status < 200) return; // 1xx: the final response follows
          c.pause();
          const discard = () => {
            if (!outcome) c.abort(new Error('body discarded'));
          };
          resolve({
            status,
            statusText,
            headers: headers as HeaderBag,
            pipe: attach,
            text: (limit = 16_384) => collect(attach, limit, discard),
            discard,
          });
        },
        onResponseData(c, chunk) {
          if (target && !target.push(chunk)) c.pause();
        },
        onResponseEnd() {
          finish(undefined);
        },
        onResponseError(_c, err) {
          finish(err);
          reject(err); // a no-op once the response was resolved: the error then reaches pipe()
        },
      },
    );
  });
}

/** A hostile server can send an endless error body: past `limit`, the connection is dropped. */
async function collect(attach: (t: BodyTarget) => Promise<unknown>, limit: number, stop: () => void): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  await attach({
    push(chunk) {
      const take = chunk.subarray(0, limit - size);
      parts.push(Buffer.from(take));
      size += take.length;
      if (size >= limit) stop();
      return true;
    },
    onRoom() {},
  });
  return Buffer.concat(parts).toString('utf8');
}
