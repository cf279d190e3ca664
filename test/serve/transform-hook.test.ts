import { describe, it, expect, afterEach } from 'vitest';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { cleanup, get, labelledSite, setActive, sha256, tempRoot, writeVersion } from './helpers.js';

let root: string | undefined;
let srv: AirlockServer | undefined;
afterEach(async () => {
  await srv?.close();
  if (root) await cleanup(root);
});

describe('HTML transform hook (src/features)', () => {
  it('transforms HTML once at load, with its own ETag, variants and a CSP from the kept hashes', async () => {
    root = await tempRoot();
    const store = join(root, 'store');
    const site = { ...labelledSite('v1'), 'guide/intro.html': '<!doctype html><p>' + 'compressible text '.repeat(100) + '</p>' };
    await writeVersion(store, 'v1', site);
    await setActive(store, 'v1');
    let calls = 0;
    srv = await createAirlockServer({
      store,
      transformHtml: (html) => {
        calls++;
        return { html: Buffer.concat([html, Buffer.from('<!-- transformed -->')]), scriptHashes: ["'sha256-abc'"] };
      },
      csp: ({ scriptHashes }) => `default-src 'self'; script-src 'self' ${scriptHashes.join(' ')}`,
    });
    const base = (await srv.listen(0)).slice(0, -1);
    const htmlFiles = Object.keys(site).filter((p) => p.endsWith('.html')).length;
    const a = await get(base + '/guide/intro', { 'accept-encoding': 'identity' });
    await get(base + '/guide/intro');
    expect(calls).toBe(htmlFiles); // once per file at load, never per request
    const want = site['guide/intro.html'] + '<!-- transformed -->';
    expect(a.body.toString()).toBe(want);
    expect(a.headers.etag).toBe(`"${sha256(want).slice(0, 32)}"`);
    expect(a.headers['content-security-policy']).toBe("default-src 'self'; script-src 'self' 'sha256-abc'");
    const gz = await get(base + '/guide/intro', { 'accept-encoding': 'gzip' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).toString()).toBe(want);
  });
});
