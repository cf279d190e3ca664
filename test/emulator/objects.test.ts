import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { list as tarList } from 'tar';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_FAULTS, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { bundleLink } from './link.js';
import { FAST, tinySite } from './site.js';

let emu: RunningEmulator;
let site: ReturnType<typeof tinySite>;
let scratch: string;

beforeAll(async () => {
  site = tinySite();
  scratch = mkdtempSync(join(tmpdir(), 'airlock-objtest-'));
  emu = await startEmulator({ sites: { 'docs.example.com': { dir: site.dir }, 'zip.example.com': { dir: site.dir, format: 'zip' } }, timings: FAST });
});
afterAll(async () => {
  await emu.close();
  site.cleanup();
  rmSync(scratch, { recursive: true, force: true });
});
beforeEach(() => {
  emu.setFaults({ ...DEFAULT_FAULTS });
  emu.state.objectRequests.length = 0;
});

async function get(url: string, headers: Record<string, string> = {}, method: 'GET' | 'HEAD' = 'GET') {
  const res = await request(url, { method, headers });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}
const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
function tamper(url: string, param: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(param, value);
  return u.toString();
}

describe('emulated object storage', () => {
  it('GET: the whole archive, ETag = quoted MD5, Content-Length = sizeBytes, Last-Modified; a tar.gz with one wrapping folder', async () => {
    const link = await bundleLink(emu);
    const r = await get(link.bundleUrl);
    expect(r.status).toBe(200);
    expect(r.headers.etag).toBe(`"${md5(r.body)}"`);
    expect(Number(r.headers['content-length'])).toBe(r.body.length);
    expect(r.body.length).toBe(link.sizeBytes);
    expect(Date.parse(String(r.headers['last-modified']))).not.toBeNaN();
    const names: string[] = [];
    await new Promise<void>((resolve, reject) => {
      const parser = tarList({ onReadEntry: (e) => names.push(e.path) });
      parser.on('end', resolve).on('error', reject);
      Readable.from([r.body]).pipe(parser as unknown as NodeJS.WritableStream);
    });
    expect(names.filter((n) => !n.endsWith('/')).sort()).toEqual([
      'site/_next/static/app.js',
      'site/guide/install.html',
      'site/guide/tokens.html',
      'site/index.html',
    ]);
  });

  it('a zip domain gets export.zip', async () => {
    const link = await bundleLink(emu, 'zip.example.com');
    expect(new URL(link.bundleUrl).pathname).toMatch(/\/export\.zip$/);
    const r = await get(link.bundleUrl);
    expect(r.body.subarray(0, 4)).toEqual(Buffer.from('PK\x03\x04', 'latin1'));
    expect(r.headers['content-type']).toBe('application/zip');
  });

  it('Range: 206 with Content-Range, suffix ranges, 416 past the end; If-Range with a stale ETag sends all', async () => {
    const link = await bundleLink(emu);
    const full = (await get(link.bundleUrl)).body;
    const part = await get(link.bundleUrl, { range: 'bytes=10-19' });
    expect(part.status).toBe(206);
    expect(part.headers['content-range']).toBe(`bytes 10-19/${full.length}`);
    expect(part.body).toEqual(full.subarray(10, 20));
    const tail = await get(link.bundleUrl, { range: 'bytes=-5' });
    expect(tail.body).toEqual(full.subarray(full.length - 5));
    const open = await get(link.bundleUrl, { range: 'bytes=100-', 'if-range': `"${md5(full)}"` });
    expect(open.status).toBe(206);
    expect(open.body).toEqual(full.subarray(100));
    const past = await get(link.bundleUrl, { range: `bytes=${full.length}-` });
    expect(past.status).toBe(416);
    expect(past.headers['content-range']).toBe(`bytes */${full.length}`);
    const stale = await get(link.bundleUrl, { range: 'bytes=10-19', 'if-range': '"0000"' });
    expect(stale.status).toBe(200);
    expect(stale.body).toEqual(full);
  });

  it('HEAD on a presigned GET link is refused (the method is signed)', async () => {
    const link = await bundleLink(emu);
    const r = await get(link.bundleUrl, {}, 'HEAD');
    expect(r.status).toBe(403);
  });

  it('forged signature: a stretched lifetime, another object key or a flipped signature byte get 403 SignatureDoesNotMatch', async () => {
    const link = await bundleLink(emu);
    const sig = new URL(link.bundleUrl).searchParams.get('X-Amz-Signature')!;
    const flipped = sig.slice(0, -1) + (sig.endsWith('0') ? '1' : '0');
    const other = link.bundleUrl.replace(/\/bundle\.tar\.gz\?/, '/secret.tar.gz?');
    for (const url of [
      tamper(link.bundleUrl, 'X-Amz-Expires', '604800'),
      tamper(link.bundleUrl, 'X-Amz-Signature', flipped),
      other,
      link.bundleUrl.split('?')[0]!,
    ]) {
      const r = await get(url);
      expect(r.status, url).toBe(403);
      expect(r.body.toString()).toContain('<Code>SignatureDoesNotMatch</Code>');
    }
  });

  it('expired link, S3 mode: 403 AccessDenied "Request has expired"', async () => {
    emu.setFaults({ linkLifetimeSeconds: 0 });
    const link = await bundleLink(emu);
    const r = await get(link.bundleUrl);
    expect(r.status).toBe(403);
    expect(r.body.toString()).toContain('<Code>AccessDenied</Code><Message>Request has expired</Message>');
    expect(Date.parse(link.expiresAt)).toBeLessThanOrEqual(Date.now());
  });

  it('expired link, GCS mode: 400 ExpiredToken', async () => {
    emu.setFaults({ linkLifetimeSeconds: 0, storage: 'gcs' });
    const r = await get((await bundleLink(emu)).bundleUrl);
    expect(r.status).toBe(400);
    expect(r.body.toString()).toContain('<Code>ExpiredToken</Code>');
  });

  it('credential leak: a request that carries Authorization is refused and recorded redacted', async () => {
    const link = await bundleLink(emu);
    const r = await get(link.bundleUrl, { authorization: `Bearer ${emu.keys.admin}` });
    expect(r.status).toBe(400);
    expect(r.body.toString()).toContain('InvalidArgument');
    const rec = emu.state.objectRequests.at(-1)!;
    expect(rec.headers.authorization).toBe('Bearer svc_[REDACTED]');
    expect(JSON.stringify(emu.state.objectRequests)).not.toContain(emu.keys.admin);
  });

  it('drop after N bytes, once: the first response is cut at exactly N bytes, the next is whole', async () => {
    const link = await bundleLink(emu);
    emu.setFaults({ dropAfterBytes: { bytes: 100, times: 1 } });
    const res = await request(link.bundleUrl);
    let got = 0;
    const err = await (async () => {
      for await (const c of res.body) got += (c as Buffer).length;
    })().then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeTruthy();
    expect(got).toBe(100);
    expect(emu.state.objectRequests.at(-1)!.bytesSent).toBe(100);
    const again = await get(link.bundleUrl);
    expect(again.body.length).toBe(link.sizeBytes);
  });

  it('throttle paces the body', async () => {
    const link = await bundleLink(emu);
    emu.setFaults({ throttleBytesPerSec: Math.ceil(link.sizeBytes / 0.4) });
    const t0 = performance.now();
    const r = await get(link.bundleUrl);
    expect(r.body.length).toBe(link.sizeBytes);
    expect(performance.now() - t0).toBeGreaterThan(300);
  });

  it('truncated object, wrong sizeBytes and wrong ETag are served as set', async () => {
    emu.setFaults({ truncateObjectAt: 50, wrongSizeBytes: 123456, wrongEtag: true });
    const link = await bundleLink(emu);
    expect(link.sizeBytes).toBe(123456);
    const r = await get(link.bundleUrl);
    expect(r.body.length).toBe(50);
    expect(r.headers.etag).not.toBe(`"${md5(r.body)}"`);
  });

  it('serveArchive serves a given file byte for byte, named by its extension', async () => {
    const evil = join(scratch, 'evil.zip');
    writeFileSync(evil, Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64, 7)]));
    emu.setFaults({ serveArchive: [{ domain: 'evil.example.com', path: evil }] });
    const link = await bundleLink(emu, 'evil.example.com');
    expect(new URL(link.bundleUrl).pathname).toMatch(/\/export\.zip$/);
    const r = await get(link.bundleUrl);
    expect(md5(r.body)).toBe(md5(Buffer.concat([Buffer.from('PK\x03\x04', 'latin1'), Buffer.alloc(64, 7)])));
  });
});
