import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { get as httpGet } from 'node:http';
import { readFile, access } from 'node:fs/promises';
import { join } from 'node:path';
import { prune, readState } from '../../src/store/index.js';
import { mirrorRig, type MirrorRig } from './rig.js';

let r: MirrorRig;
beforeAll(async () => {
  r = await mirrorRig(3 * 1024 * 1024);
});
afterAll(async () => r.close());

/** A reader that stops after its first chunk until `gate` opens, so the download surely spans the import, activation and prune. */
function gatedDownload(url: string, gate: Promise<void>, started: () => void): Promise<{ status: number; sha256: string; bytes: number; length: number }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { agent: false }, (res) => {
      const h = createHash('sha256');
      let bytes = 0;
      res.on('data', (c: Buffer) => {
        h.update(c);
        bytes += c.length;
        if (bytes === c.length) {
          started();
          res.pause();
          void gate.then(() => res.resume());
        }
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, sha256: h.digest('hex'), bytes, length: Number(res.headers['content-length']) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

describe('mirror under concurrent downloads', () => {
  it("downloads in flight while v2 and v3 are imported and activated and v1 is pruned all complete with v1's exact bytes", async () => {
    const meta = JSON.parse(await readFile(join(r.store, 'versions', 'v1', 'version.json'), 'utf8')) as {
      archive: { sha256: string; size: number };
      packageSha256: string;
    };
    const b = (await (await r.api('/v1/static-export/jobs/mv_v1/bundle', { method: 'POST' })).json()) as { bundleUrl: string; packageUrl: string };
    let open!: () => void;
    const gate = new Promise<void>((res) => (open = res));
    let started = 0;
    const downloads = Array.from({ length: 8 }, (_, i) => gatedDownload(i % 2 ? b.packageUrl : b.bundleUrl, gate, () => started++));
    for (const d of downloads) d.catch(() => {}); // a failure below must not leave them unhandled; Promise.all still sees them
    try {
      for (let i = 0; i < 1000 && started < 8; i++) await new Promise((res) => setTimeout(res, 10));
      expect(started).toBe(8);
      // Import + activate twice while the downloads run (prune keeps the previous version for rollback).
      await r.addVersion('v2', 1024);
      await r.addVersion('v3', 1024);
      expect((await readState(r.store)).active).toBe('v3');
      // The server switches within its poll interval; then v1 is neither active, previous nor leased.
      for (let i = 0; i < 500 && r.srv.current().version !== 'v3'; i++) await new Promise((res) => setTimeout(res, 20));
      expect(r.srv.current().version).toBe('v3');
      expect(await prune(r.store, 1)).toContain('v1');
      expect(
        await access(join(r.store, 'versions', 'v1')).then(
          () => true,
          () => false,
        ),
      ).toBe(false);
    } finally {
      open(); // however this ends: no download is left waiting on the gate
    }
    const done = await Promise.all(downloads);
    done.forEach((d, i) => {
      expect(d.status).toBe(200);
      expect(d.bytes).toBe(d.length);
      expect(d.sha256).toBe(i % 2 ? meta.packageSha256 : meta.archive.sha256);
    });
    // After the prune, v1's link is a clean 404, and v2 is served.
    expect((await fetch(b.bundleUrl)).status).toBe(404);
    const j = (await (await r.api('/v1/static-export/jobs', { method: 'POST', body: JSON.stringify({ domain: 'docs.example.com' }) })).json()) as {
      jobId: string;
    };
    expect(j.jobId).toBe('mv_v3');
  }, 30_000);
});
