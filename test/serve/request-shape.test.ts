import { describe, expect, it } from 'vitest';
import { IncomingMessage, ServerResponse } from 'node:http';
import { Socket } from 'node:net';
import { capturedBroken, capturedIndex, createHandler } from '../../src/serve/handler.js';
import { createMetrics } from '../../src/serve/metrics.js';
import type { SendContext } from '../../src/serve/send-file.js';
import type { LoadedIndex } from '../../src/serve/version-index.js';

/**
 * Node's HTTP and stream code reads the same fields of every request and response. A property that
 * airlock adds to some of them only (the ones handed to its routes, the responses still open when
 * counted) gives that code a second shape to handle on every request after, and V8 answers every
 * request more slowly from then on. What a request carries for airlock is kept beside it.
 */
const ownNames = (o: object) => Object.getOwnPropertyNames(o).sort();

function request(method: string, url: string): { req: IncomingMessage; res: ServerResponse } {
  const req = new IncomingMessage(new Socket());
  req.method = method;
  req.url = url;
  return { req, res: new ServerResponse(req) };
}

describe('the shape of requests and responses', () => {
  it("a request handed to airlock's routes gets no property of airlock's: its version index and state are kept beside it", () => {
    const idx = { version: 'v1', base: [], routes: new Map() } as unknown as LoadedIndex;
    let handed: IncomingMessage | null = null;
    const handle = createHandler({
      current: () => idx,
      send: {} as SendContext,
      app: (req) => void (handed = req),
      appPrefixes: ['/_airlock/'],
      appRoute: null,
      accessLog: null,
      broken: () => 'its files are gone',
    });
    const { req, res } = request('POST', '/_airlock/search/docs.example.com');
    const before = ownNames(req);
    handle(req, res);
    expect(handed).toBe(req);
    expect(ownNames(req)).toEqual(before);
    expect([capturedIndex(req), capturedBroken(req)]).toEqual([idx, 'its files are gone']);
    expect([capturedIndex(request('GET', '/').req), capturedBroken(request('GET', '/').req)]).toEqual([undefined, null]);
  });

  it('a response counted by the metrics before it has ended gets no property, and is counted once it ends', async () => {
    const metrics = createMetrics();
    const { res } = request('GET', '/guide');
    const before = ownNames(res);
    metrics.done(res, performance.now());
    expect(ownNames(res)).toEqual(before);
    const counted = /^airlock_http_requests_total\{method="GET",status_class="2xx"\} 1$/m;
    expect(await metrics.text()).not.toMatch(counted);
    res.emit('finish');
    expect(await metrics.text()).toMatch(counted);
  });
});
