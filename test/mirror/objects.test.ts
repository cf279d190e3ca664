import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { join } from 'node:path';
import { createMirror } from '../../src/mirror/index.js';
import { handleObject } from '../../src/mirror/objects.js';
import { signLink } from '../../src/mirror/sign.js';
import { openDescriptors, requestAndHangUp, serverAfterHangUp, within, type Handler } from '../helpers/hang-up.js';
import { tokensFile } from './helpers.js';
import { mirrorRig, TOKEN, type MirrorRig } from './rig.js';

let r: MirrorRig;
let links: { bundleUrl: string; packageUrl: string; sizeBytes: number };
let archive: Buffer;
let pkg: Buffer;

beforeAll(async () => {
  r = await mirrorRig(64 * 1024);
  links = (await (await r.api('/v1/static-export/jobs/mv_v1/bundle', { method: 'POST' })).json()) as typeof links;
  const meta = JSON.parse(await readFile(join(r.store, 'versions', 'v1', 'version.json'), 'utf8')) as { archive: { offset: number; size: number } };
  pkg = await readFile(join(r.store, 'versions', 'v1', 'package.airlock'));
  archive = pkg.subarray(meta.archive.offset, meta.archive.offset + meta.archive.size);
});
afterAll(async () => r.close());

const sha = (b: Buffer) => createHash('sha256').update(b).digest();
const get = async (url: string, headers: Record<string, string> = {}, method = 'GET') => {
  const res = await fetch(url, { headers, method });
  return { res, body: Buffer.from(await res.arrayBuffer()) };
};
const withParam = (url: string, k: string, v: string | null) => {
  const u = new URL(url);
  if (v === null) u.searchParams.delete(k);
  else u.searchParams.set(k, v);
  return u.toString();
};

describe('mirror object links', () => {
  it('serves the original export archive byte for byte with length, strong ETag, Repr-Digest and x-amz-checksum-sha256', async () => {
    const { res, body } = await get(links.bundleUrl);
    expect(res.status).toBe(200);
    expect(body.equals(archive)).toBe(true);
    expect(Number(res.headers.get('content-length'))).toBe(links.sizeBytes);
    expect(res.headers.get('etag')).toBe(`"${sha(archive).toString('hex')}"`);
    expect(res.headers.get('repr-digest')).toBe(`sha-256=:${sha(archive).toString('base64')}:`);
    expect(res.headers.get('x-amz-checksum-sha256')).toBe(sha(archive).toString('base64'));
  });
  it('format=airlock (covered by the signature) serves the stored signed package byte for byte', async () => {
    const { res, body } = await get(links.packageUrl);
    expect(res.status).toBe(200);
    expect(body.equals(pkg)).toBe(true);
  });
  it('Range: 206 with Content-Range; suffix range; If-Range with a stale validator gets the whole object', async () => {
    let g = await get(links.bundleUrl, { range: 'bytes=10-99' });
    expect(g.res.status).toBe(206);
    expect(g.res.headers.get('content-range')).toBe(`bytes 10-99/${archive.length}`);
    expect(g.body.equals(archive.subarray(10, 100))).toBe(true);
    g = await get(links.bundleUrl, { range: 'bytes=-5' });
    expect(g.body.equals(archive.subarray(archive.length - 5))).toBe(true);
    g = await get(links.bundleUrl, { range: 'bytes=10-99', 'if-range': '"stale"' });
    expect(g.res.status).toBe(200);
    expect(g.body.length).toBe(archive.length);
    g = await get(links.bundleUrl, { range: 'bytes=10-99', 'if-range': g.res.headers.get('etag')! });
    expect(g.res.status).toBe(206);
  });
  it('Range abuse: many ranges (amplification) → whole object once; start past the end or huge → 416; negative/garbage ignored', async () => {
    const many = 'bytes=' + Array.from({ length: 200 }, () => '0-').join(',');
    let g = await get(links.bundleUrl, { range: many });
    expect(g.res.status).toBe(200);
    expect(g.body.length).toBe(archive.length);
    for (const range of [`bytes=${archive.length}-`, 'bytes=99999999999999-', 'bytes=-0']) {
      g = await get(links.bundleUrl, { range });
      expect(g.res.status, range).toBe(416);
      expect(g.res.headers.get('content-range')).toBe(`bytes */${archive.length}`);
    }
    for (const range of ['bytes=-5-10', 'bytes=9-3', 'bytes=1e3-', 'items=0-1', 'bytes=99999999999999999999-']) {
      g = await get(links.bundleUrl, { range });
      expect(g.res.status, range).toBe(200);
      expect(g.body.equals(archive)).toBe(true);
    }
  });
  it('forged signatures → 403 SignatureDoesNotMatch: changed sig, changed expiry, archive link turned into the package link, another version', async () => {
    const forged = [
      withParam(links.bundleUrl, 'sig', 'A'.repeat(43)),
      withParam(links.bundleUrl, 'expires', String(Math.floor(Date.now() / 1000) + 10 * 365 * 86400)),
      withParam(links.bundleUrl, 'format', 'airlock'),
      links.bundleUrl.replace('/v1/', '/v2/'),
    ];
    for (const url of forged) {
      const g = await get(url);
      expect(g.res.status, url).toBe(403);
      expect(g.body.toString()).toContain('<Code>SignatureDoesNotMatch</Code>');
    }
    for (const url of [withParam(links.bundleUrl, 'sig', null), withParam(links.bundleUrl, 'sig', 'short'), links.bundleUrl + '&sig=x']) {
      expect((await get(url)).res.status, url).toBe(403);
    }
  });
  it('expired link → 403 AccessDenied "Request has expired" (S3 shape); a fresh bundle call gives a working link', async () => {
    const saved = r.clock.now;
    r.clock.now = Date.now() + 3600_000;
    try {
      const g = await get(links.bundleUrl);
      expect(g.res.status).toBe(403);
      expect(g.body.toString()).toContain('<Code>AccessDenied</Code><Message>Request has expired</Message>');
      const fresh = (await (await r.api('/v1/static-export/jobs/mv_v1/bundle', { method: 'POST' })).json()) as typeof links;
      expect((await get(fresh.bundleUrl)).body.equals(archive)).toBe(true);
    } finally {
      r.clock.now = saved;
    }
  });
  it('HEAD is refused like a presigned GET link on object storage (403); other methods too', async () => {
    expect((await get(links.bundleUrl, {}, 'HEAD')).res.status).toBe(403);
    expect((await get(links.bundleUrl, {}, 'DELETE')).res.status).toBe(403);
  });
  it('a client gone before the object is sent (aborted download, replica shutting down): no throw, no write, the file is closed', async () => {
    const secret = Buffer.alloc(32, 7);
    const errors: unknown[] = [];
    let done!: (v: { thrown: unknown; res: ServerResponse }) => void;
    const handled = new Promise<{ thrown: unknown; res: ServerResponse }>((resolve) => (done = resolve));
    // The handler starts only once the client has hung up: the response is destroyed by then,
    // deterministically (the race CI met when a replica shut down mid-download).
    const server = await serverAfterHangUp((req, res) => {
      handleObject({ store: r.store, secret, now: Date.now, onError: (e) => errors.push(e) }, req, res).then(
        () => done({ thrown: undefined, res }),
        (thrown: unknown) => done({ thrown, res }),
      );
    });
    try {
      const name = new URL(links.bundleUrl).pathname.split('/').pop()!;
      await requestAndHangUp(
        server,
        `/_airlock/objects/v1/${name}?${signLink(secret, { label: 'v1', name, form: 'archive', expires: Math.floor(Date.now() / 1000) + 600 })}`,
      );
      const { thrown, res } = await within(handled, 10_000, 'the object handler ending');
      expect(thrown).toBeUndefined();
      expect(errors).toEqual([]);
      expect(res.headersSent).toBe(false);
      expect(await openDescriptors((t) => t.endsWith('package.airlock'))).toBe(0);
    } finally {
      await server.close();
    }
  });
  it('the downloads metric counts answers only: a client gone before any answer is not a 2xx download', async () => {
    const secretFile = join(r.dir, 'metric-secret');
    await writeFile(secretFile, Buffer.alloc(32, 9));
    const statuses: number[] = [];
    const mirror = await createMirror({
      store: r.store,
      tokensFile: await tokensFile(join(r.dir, 'metric-tokens'), [TOKEN]),
      secretFile,
      log: () => {},
      onDownload: (s) => statuses.push(s),
    });
    const name = new URL(links.bundleUrl).pathname.split('/').pop()!;
    const path = `/_airlock/objects/v1/${name}?${signLink(Buffer.alloc(32, 9), { label: 'v1', name, form: 'archive', expires: Math.floor(Date.now() / 1000) + 600 })}`;
    let done!: () => void;
    let handled = new Promise<void>((resolve) => (done = resolve));
    const app: Handler = (req, res) =>
      void (mirror.app.fetch(new Request(`http://127.0.0.1${req.url}`), { incoming: req, outgoing: res }) as Promise<Response>).then(
        () => done(),
        () => done(),
      );
    let answerAtOnce = false;
    // The first request: the app runs only once the client has hung up. The control: answered.
    const server = await serverAfterHangUp(app, () => (answerAtOnce ? app : undefined));
    try {
      await requestAndHangUp(server, path);
      await within(handled, 10_000, 'the mirror app ending');
      expect(statuses).toEqual([]);
      // The control: the same link, answered, is counted once as 200.
      answerAtOnce = true;
      handled = new Promise<void>((resolve) => (done = resolve));
      const got = await get(`http://127.0.0.1:${server.port}${path}`);
      await within(handled, 10_000, 'the mirror app ending');
      expect(got.res.status).toBe(200);
      expect(statuses).toEqual([200]);
    } finally {
      await server.close();
    }
  });
});
