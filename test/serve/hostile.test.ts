import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { cleanup, rawGet, rawRequest, setActive, tempRoot, writeVersion, type RawResponse } from './helpers.js';

/**
 * Hostile requests sent raw over net.connect, so no client normalises them. Marker files sit
 * above the store, beside it, in a prefix-sibling folder (store-evil next to store), inside the
 * version folder but outside site/, and as dotfiles inside the site: no response may contain one.
 */
const MARK = 'AIRLOCK-SECRET-MARKER';
let root: string;
let srv: AirlockServer;
let port: number;

beforeAll(async () => {
  root = await tempRoot('airlock-hostile-');
  const store = join(root, 'store');
  await writeVersion(store, 'v1', { 'index.html': '<p>home</p>', 'a/b.html': '<p>page b</p>', '.env': `${MARK}-dotfile`, 'x/.git/config': `${MARK}-git` });
  await writeFile(join(root, 'secret.txt'), `${MARK}-above`);
  await writeFile(join(store, 'secret.txt'), `${MARK}-store-root`);
  await writeFile(join(store, 'versions', 'v1', 'secret.txt'), `${MARK}-version-dir`);
  await mkdir(join(root, 'store-evil'), { recursive: true });
  await writeFile(join(root, 'store-evil', 'secret.txt'), `${MARK}-prefix-sibling`);
  await setActive(store, 'v1');
  srv = await createAirlockServer({ store });
  port = Number(new URL(await srv.listen(0)).port);
});
afterAll(async () => {
  await srv?.close();
  await cleanup(root);
});

function safe(r: RawResponse, allowed: number[]): void {
  expect(allowed, `status ${r.status}`).toContain(r.status);
  expect(r.raw).not.toContain(MARK);
}

describe('hostile request targets', () => {
  it.each([
    ['dot-dot traversal', '/../secret.txt', [400, 404]],
    ['dot-dot traversal to the store root', '/../../../secret.txt', [400, 404]],
    ['encoded dots %2e%2e', '/%2e%2e/%2e%2e/secret.txt', [404]],
    ['mixed encoded dot .%2e', '/.%2e/.%2e/secret.txt', [404]],
    ['uppercase encoded dots %2E%2E', '/%2E%2E/secret.txt', [404]],
    ['encoded slash %2f', '/..%2f..%2fsecret.txt', [400]],
    ['encoded backslash %5c', '/..%5c..%5csecret.txt', [400]],
    ['double-encoded dots %252e', '/%252e%252e/%252e%252e/secret.txt', [404]],
    ['raw backslash', '/..\\..\\secret.txt', [400]],
    ['NUL byte %00', '/index.html%00.png', [400]],
    ['overlong UTF-8 dot %c0%ae', '/%c0%ae%c0%ae/secret.txt', [400]],
    ['overlong UTF-8 slash %c0%af', '/..%c0%af..%c0%afsecret.txt', [400]],
    ['invalid UTF-8 %ff', '/%ff%fe', [400]],
    ['protocol-relative // prefix', '//evil.example/secret.txt', [404]],
    ['dotfile .env', '/.env', [404]],
    ['dotfile in a folder .git/config', '/x/.git/config', [404]],
    ['encoded dotfile %2eenv', '/%2eenv', [404]],
    ['prefix-sibling of the store folder', '/../../store-evil/secret.txt', [400, 404]],
    ['prefix-sibling via encoded dots', '/%2e%2e/%2e%2e/%2e%2e/store-evil/secret.txt', [404]],
    ['version folder file outside site/', '/../secret.txt', [400, 404]],
    ['manifest by traversal', '/%2e%2e/airlock.json', [404]],
    ['absolute-form target to another host', 'http://evil.example/secret.txt', [400]],
    ['a 10 KB path', '/' + 'a/'.repeat(5000), [404, 414]],
    ['reserved prefix traversal', '/_airlock/../secret.txt', [404]],
  ] as const)('%s', async (_name, target, allowed) => {
    safe(await rawGet(port, target), [...allowed]);
  });

  it('redirect forms never produce a Location that leaves the site', async () => {
    for (const t of ['//evil.example/a', '/a/b/?next=//evil.example', '/%2fevil.example/a', '/\\evil.example/a']) {
      const r = await rawGet(port, t);
      if (r.headers.location !== undefined) expect(r.headers.location, t).toMatch(/^\/(?!\/)/);
      expect(r.raw).not.toContain(MARK);
    }
    const ok = await rawGet(port, '/a/b/?next=//evil.example');
    expect([ok.status, ok.headers.location]).toEqual([308, '/a/b?next=//evil.example']);
  });
});

describe('hostile methods and headers', () => {
  it.each(['PROPFIND', 'TRACE', 'CONNECT-ISH', 'DELETE', 'BREW'])('unknown or unsafe method %s', async (m) => {
    const r = await rawRequest(port, `${m} /index.html HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    expect([400, 405]).toContain(r.status);
    if (r.status === 405) expect(r.headers.allow).toBe('GET, HEAD');
  });
  it.each([
    ['malformed Range', 'Range: bytes=--1', 200],
    ['Range with a huge number', 'Range: bytes=0-99999999999999999999999', 200],
    ['many ranges (amplification)', 'Range: bytes=' + Array.from({ length: 200 }, (_, i) => `${i}-${i}`).join(','), 200],
    ['range past the end', 'Range: bytes=999999-', 416],
    ['garbage If-None-Match', 'If-None-Match: ,,,W/ "', 200],
    ['garbage If-Modified-Since', 'If-Modified-Since: not a date at all', 200],
    ['garbage If-Range', 'Range: bytes=0-1\r\nIf-Range: W/garbage', 200],
    ['garbage Accept-Encoding', 'Accept-Encoding: br;q=abc, ;;;, gzip;q=2', 200],
  ] as const)('%s', async (_name, header, status) => {
    const r = await rawGet(port, '/index.html', header + '\r\n');
    expect(r.status).toBe(status);
    expect(r.raw).not.toContain(MARK);
  });
  it('request smuggling attempt with two Content-Length headers is refused by the parser', async () => {
    const r = await rawRequest(port, 'GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\nConnection: close\r\n\r\nab');
    expect(r.status).toBe(400);
  });
  it('the server is still healthy after the hostile suite', async () => {
    expect((await rawGet(port, '/_airlock/health')).status).toBe(200);
  });
});
