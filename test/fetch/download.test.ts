import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { download } from '../../src/fetch/download.js';
import { DigestMismatchError, AirlockError } from '../../src/errors.js';
import { startObjectServer, type ObjectServer, type ObjectServerOptions } from './object-server.js';

const FAST = { retries: 4, baseMs: 5, maxMs: 50 };
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let dir: string;
let srv: ObjectServer | undefined;
const body = randomBytes(600_000);
const part = () => join(dir, '.bundle.tar.gz.part');
async function serve(o: Partial<ObjectServerOptions> = {}) {
  srv = await startObjectServer({ body, ...o });
  return srv;
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-dl-'));
});
afterEach(async () => {
  await srv?.close();
  srv = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('download', () => {
  it('streams the object to the part with sha256 and md5, and never sends an Authorization header', async () => {
    const s = await serve();
    const r = await download({ url: s.url, partPath: part(), expectedSize: body.length, retry: FAST });
    expect(r.sha256).toBe(sha(body));
    expect(r.md5).toBe(createHash('md5').update(body).digest('hex'));
    expect(r).toMatchObject({ size: body.length, resumedFrom: 0, requests: 1, path: part() });
    expect((await readFile(part())).equals(body)).toBe(true);
    expect(s.requests.every((q) => q.authorization === undefined)).toBe(true);
  });

  it('resumes after dropped connections with Range + If-Range and downloads no byte twice', async () => {
    const s = await serve({ dropAfter: (i) => (i < 3 ? 150_000 : undefined) });
    const r = await download({ url: s.url, partPath: part(), retry: FAST });
    expect(r.sha256).toBe(sha(body));
    expect(s.requests.map((q) => q.range)).toEqual([undefined, 'bytes=150000-', 'bytes=300000-', 'bytes=450000-']);
    const etag = `"${createHash('md5').update(body).digest('hex')}"`;
    expect(s.requests.slice(1).map((q) => q.ifRange)).toEqual([etag, etag, etag]);
    expect(s.bytesSent).toBe(body.length);
  });

  it('restarts from zero when If-Range says the object changed (200 to a Range request)', async () => {
    const changed = Buffer.concat([body.subarray(0, 100), randomBytes(5)]);
    // After the first (dropped) request the object is replaced: its ETag no longer matches If-Range.
    const s = await serve({
      dropAfter: (i) => (i === 0 ? 100_000 : undefined),
      statusFor: (i) => {
        if (i === 1) s.options.body = changed;
        return undefined;
      },
    });
    const r = await download({ url: s.url, partPath: part(), retry: FAST });
    expect(s.requests.map((q) => [q.range, q.status])).toEqual([
      [undefined, 200],
      ['bytes=100000-', 200],
    ]);
    expect(r).toMatchObject({ sha256: sha(changed), size: 105 });
    expect((await readFile(part())).equals(changed)).toBe(true);
  });

  it('restarts when a 206 does not continue where the part ends (Content-Range start mismatch)', async () => {
    const s = await serve({ dropAfter: (i) => (i === 0 ? 100_000 : undefined), rangeStartOverride: 50_000 });
    const r = await download({ url: s.url, partPath: part(), retry: FAST });
    // The misplaced 206 is not spliced in: the download starts over with a plain GET.
    expect(s.requests.map((q) => [q.range, q.status])).toEqual([
      [undefined, 200],
      ['bytes=100000-', 206],
      [undefined, 200],
    ]);
    expect(r).toMatchObject({ sha256: sha(body), restarts: 1 });
  });

  it('gives up instead of splicing when every 206 is misplaced', async () => {
    const s = await serve({ dropAfter: () => 100_000, rangeStartOverride: 50_000 });
    await expect(download({ url: s.url, partPath: part(), retry: FAST })).rejects.toMatchObject({ code: 'AIRLOCK_DOWNLOAD_UNSTABLE' });
  });

  it('without a strong ETag a broken download restarts from zero (no unvalidated splice)', async () => {
    const s = await serve({ etag: 'W/"weak"', dropAfter: (i) => (i === 0 ? 100_000 : undefined) });
    const r = await download({ url: s.url, partPath: part(), retry: FAST });
    expect(r.sha256).toBe(sha(body));
    expect(s.requests.map((q) => q.range)).toEqual([undefined, undefined]);
  });

  it('asks for a fresh link when the link expires mid-download and resumes from the same offset', async () => {
    let fresh = 0;
    // The first request's link expires while its body is in flight, and the connection drops.
    const s = await serve({
      dropAfter: (i) => {
        if (i === 0) {
          s.expireToken('t0');
          return 200_000;
        }
        return undefined;
      },
    });
    const r = await download({ url: s.url, partPath: part(), retry: FAST, getFreshUrl: async () => ({ url: s.linkFor(`t${++fresh}`) }) });
    expect(r.sha256).toBe(sha(body));
    expect(fresh).toBe(1);
    expect(s.requests.map((q) => [q.token, q.status, q.range])).toEqual([
      ['t0', 200, undefined],
      ['t0', 403, 'bytes=200000-'],
      ['t1', 206, 'bytes=200000-'],
    ]);
    expect(s.bytesSent).toBe(body.length);
  });

  it('renews a link whose expiresAt has already passed before sending any request with it', async () => {
    const s = await serve();
    s.expireToken('t0');
    const r = await download({
      url: s.url,
      expiresAt: new Date(Date.now() - 1000).toISOString(),
      partPath: part(),
      retry: FAST,
      getFreshUrl: async () => ({ url: s.linkFor('t1'), expiresAt: new Date(Date.now() + 60_000) }),
    });
    expect(r.freshLinks).toBe(1);
    expect(s.requests.map((q) => q.token)).toEqual(['t1']);
  });

  it('fails with a clear error when the link expired and no fresh link can be had', async () => {
    const s = await serve();
    s.expireToken('t0');
    await expect(download({ url: s.url, partPath: part(), retry: FAST })).rejects.toMatchObject({ code: 'AIRLOCK_LINK_EXPIRED' });
  });

  it('retries a burst of 500s and honours Retry-After on 429', async () => {
    const s = await serve({ statusFor: (i) => (i < 2 ? 500 : i === 2 ? 429 : undefined), retryAfter: '1' });
    const t0 = Date.now();
    const r = await download({ url: s.url, partPath: part(), retry: { retries: 4, baseMs: 5, maxMs: 2000 } });
    expect(r.sha256).toBe(sha(body));
    expect(r.requests).toBe(4);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
  });

  it('gives up after the retry budget with the last reason', async () => {
    const s = await serve({ statusFor: () => 503 });
    await expect(download({ url: s.url, partPath: part(), retry: FAST })).rejects.toMatchObject({ code: 'AIRLOCK_DOWNLOAD_FAILED' });
    expect(s.requests.length).toBe(FAST.retries + 1);
  });

  it('size mismatch against sizeBytes is refused before the body is downloaded, and the part deleted', async () => {
    const s = await serve();
    const err = await download({ url: s.url, partPath: part(), expectedSize: body.length + 1, retry: FAST }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DigestMismatchError);
    expect((err as DigestMismatchError).exitCode).toBe(4);
    expect(existsSync(part())).toBe(false);
    expect(existsSync(part() + '.json')).toBe(false);
  });

  it('MD5 mismatch against a plain ETag is refused (exit 4) and the part deleted', async () => {
    const s = await serve({ etag: `"${'0'.repeat(32)}"` });
    const err = await download({ url: s.url, partPath: part(), retry: FAST }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AIRLOCK_MD5_MISMATCH', exitCode: 4 });
    expect(existsSync(part())).toBe(false);
  });

  it("the caller's check runs alongside the MD5 read-back; a wrong MD5 wins over its error (the transfer explains the bad bytes)", async () => {
    const good = await serve();
    const r = await download({ url: good.url, partPath: part(), retry: FAST, alongside: async (p) => (await readFile(p)).length });
    expect(r).toMatchObject({ alongside: body.length, md5: createHash('md5').update(body).digest('hex') });
    expect(r.bytesMs).toBeGreaterThanOrEqual(0);
    const bad = await serve({ etag: `"${'0'.repeat(32)}"` });
    await rm(part(), { force: true });
    const err = await download({ url: bad.url, partPath: part(), retry: FAST, alongside: () => Promise.reject(new Error('scan failed')) }).catch(
      (e: unknown) => e,
    );
    expect(err).toMatchObject({ code: 'AIRLOCK_MD5_MISMATCH', exitCode: 4 });
    expect(existsSync(part())).toBe(false);
    const scanErr = await download({ url: good.url, partPath: part(), retry: FAST, alongside: () => Promise.reject(new Error('scan failed')) }).catch(
      (e: unknown) => e,
    );
    expect(scanErr).toMatchObject({ message: 'scan failed' });
  });

  it('a multipart ETag ("…-3") is not taken for an MD5', async () => {
    const s = await serve({ etag: `"${'0'.repeat(32)}-3"` });
    const r = await download({ url: s.url, partPath: part(), retry: FAST });
    expect(r.md5).toBeUndefined();
    expect(r.sha256).toBe(sha(body));
  });

  it('checks Repr-Digest (RFC 9530) and x-amz-checksum-sha256 when the server states them', async () => {
    const good = createHash('sha256').update(body).digest('base64');
    const s = await serve({ extraHeaders: { 'repr-digest': `sha-256=:${good}:` } });
    await expect(download({ url: s.url, partPath: part(), retry: FAST })).resolves.toMatchObject({ sha256: sha(body) });
    s.options.extraHeaders = { 'x-amz-checksum-sha256': createHash('sha256').update('other').digest('base64') };
    await rm(part() + '.json', { force: true });
    await expect(download({ url: s.url, partPath: part(), retry: FAST })).rejects.toMatchObject({ code: 'AIRLOCK_SHA256_MISMATCH' });
  });

  it('a truncated object (fewer bytes than Content-Length, every time) fails after retries and keeps nothing wrong', async () => {
    const s = await serve({ statedLength: body.length + 1000 });
    s.options.dropAfter = () => 0;
    await expect(download({ url: s.url, partPath: part(), retry: FAST })).rejects.toBeInstanceOf(AirlockError);
  });

  it('interrupted before the first byte: names no part file (none exists) and says nothing was downloaded', async () => {
    const s = await serve({});
    const ac = new AbortController();
    ac.abort();
    const err = (await download({ url: s.url, partPath: part(), signal: ac.signal, retry: FAST }).then(
      () => null,
      (e: unknown) => e,
    )) as AirlockError;
    expect(err).toMatchObject({ code: 'AIRLOCK_INTERRUPTED' });
    expect(err.message).toContain('nothing was downloaded yet');
    expect(err.message).not.toContain(part());
    await expect(stat(part())).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('an interrupted run (abort) keeps the part and sidecar; the next run resumes from them without re-downloading', async () => {
    const s = await serve({ throttleBytesPer50ms: 64 * 1024 });
    const ac = new AbortController();
    const first = download({
      url: s.url,
      partPath: part(),
      jobId: 'j1',
      signal: ac.signal,
      retry: FAST,
      onProgress: (p) => {
        if (p.bytes >= 200_000) ac.abort();
      },
    });
    await expect(first).rejects.toMatchObject({ code: 'AIRLOCK_INTERRUPTED' });
    const kept = (await stat(part())).size;
    expect(kept).toBeGreaterThanOrEqual(200_000);
    expect(JSON.parse(await readFile(part() + '.json', 'utf8'))).toMatchObject({ jobId: 'j1', size: body.length });
    s.options.throttleBytesPer50ms = undefined;
    const r = await download({ url: s.linkFor('other-link'), partPath: part(), jobId: 'j1', retry: FAST });
    expect(r).toMatchObject({ resumedFrom: kept, sha256: sha(body), md5: createHash('md5').update(body).digest('hex'), requests: 1 });
    // The second run asked only for the missing bytes, and got only those.
    expect(s.requests.at(-1)).toMatchObject({ range: `bytes=${kept}-`, status: 206, sent: body.length - kept });
  });

  it('a part left by another job is not reused', async () => {
    await writeFile(part(), body.subarray(0, 1000));
    await writeFile(part() + '.json', JSON.stringify({ format: 'airlock-part/1', etag: '"x"', size: body.length, jobId: 'other', statedSha256: null }));
    const s = await serve();
    const r = await download({ url: s.url, partPath: part(), jobId: 'j1', retry: FAST });
    expect(r.resumedFrom).toBe(0);
    expect(s.requests[0]!.range).toBeUndefined();
  });

  it('a complete part from an interrupted run is confirmed by a 416 and not downloaded again', async () => {
    const s = await serve();
    await download({ url: s.url, partPath: part(), jobId: 'j', retry: FAST });
    const sent = s.bytesSent;
    const r = await download({ url: s.url, partPath: part(), jobId: 'j', retry: FAST });
    expect(r).toMatchObject({ sha256: sha(body), resumedFrom: body.length });
    expect(s.requests.at(-1)!.status).toBe(416);
    expect(s.bytesSent).toBe(sent);
  });

  it('disk full (ENOSPC) mid-download: clear error, the part keeps only whole hashed bytes, and a re-run completes it', async () => {
    const s = await serve();
    let budget = 250_000;
    const openFile = async (p: string, flags: string) => {
      const fh = await open(p, flags);
      return new Proxy(fh, {
        get(t, k) {
          if (k !== 'write') {
            const v = Reflect.get(t, k);
            return typeof v === 'function' ? v.bind(t) : v;
          }
          return async (buf: Buffer, off: number, len: number, pos: number) => {
            if (budget <= 0) throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
            const n = Math.min(len, budget);
            budget -= n;
            return t.write(buf, off, n, pos);
          };
        },
      });
    };
    const err = await download({ url: s.url, partPath: part(), jobId: 'j', retry: FAST, openFile }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AIRLOCK_NO_SPACE', exitCode: 1 });
    expect((err as Error).message).toContain(part());
    expect((await readFile(part())).equals(body.subarray(0, 250_000))).toBe(true);
    const r = await download({ url: s.url, partPath: part(), jobId: 'j', retry: FAST });
    expect(r).toMatchObject({ resumedFrom: 250_000, sha256: sha(body) });
  });

  it('moves the verified bytes to dest and removes the sidecar', async () => {
    const s = await serve();
    const dest = join(dir, 'bundle.tar.gz');
    const r = await download({ url: s.url, partPath: part(), dest, retry: FAST });
    expect(r.path).toBe(dest);
    expect(existsSync(part())).toBe(false);
    expect(existsSync(part() + '.json')).toBe(false);
    expect((await readFile(dest)).equals(body)).toBe(true);
  });
});
