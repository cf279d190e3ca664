import { afterEach, describe, expect, it, vi } from 'vitest';
import { execFileSync } from 'node:child_process';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createLibraryServer, type LibraryServer } from '../../src/serve/library.js';
import { cleanup, get, setActive, tempRoot, writeVersion } from './helpers.js';

/**
 * A library's open sites poll their active pointer only while requests reach them. Here the file
 * system reports nothing (fs.watch unavailable, as on NFS), so the polls and the check a request
 * makes of an idle site are all that can see an activation.
 */
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const watch = () => {
    throw new Error('fs.watch is not available on this file system');
  };
  return { ...fs, watch, default: { ...fs, watch } };
});

let root: string | null = null;
let srv: LibraryServer | null = null;
afterEach(async () => {
  await srv?.close(1000);
  srv = null;
  vi.restoreAllMocks();
  if (root !== null) await cleanup(root);
  root = null;
});

describe('an idle library site', () => {
  it('stops polling its pointer; the next request looks at it first, so an activation the file system did not report is served from that request on', async () => {
    const SCAN_MS = 7777; // the library's rescan interval (rescans are asked for here)
    const POLL_MS = 333; // the sites' pointer polls
    const stopped: number[] = [];
    // Intervals never fire here: rescans are asked for (recheck), and polls counted as started and stopped.
    const every = vi.spyOn(globalThis, 'setInterval').mockImplementation(((_fn: () => void, ms: number) => {
      const t = { ms, unref: () => t };
      return t;
    }) as never);
    vi.spyOn(globalThis, 'clearInterval').mockImplementation(((t?: { ms?: number }) => void (t?.ms !== undefined && stopped.push(t.ms))) as never);
    const polling = () => every.mock.calls.filter(([, ms]) => ms === POLL_MS).length - stopped.filter((ms) => ms === POLL_MS).length;

    root = await tempRoot('airlock-library-idle-');
    const store = join(root, 'a.example');
    await writeVersion(store, 'v1', { 'guide.html': '<p>guide one</p>' }, { domain: 'a.example' });
    await writeVersion(store, 'v2', { 'guide.html': '<p>guide two</p>' }, { domain: 'a.example' });
    await setActive(store, 'v1');
    let now = 1_000_000;
    const logs: string[] = [];
    srv = await createLibraryServer({
      library: root,
      siteOptions: () => ({ lease: false, pollMs: POLL_MS, log: (l: string) => logs.push(l) }),
      clock: () => now,
      pollMs: SCAN_MS,
      log: (l) => logs.push(l),
    });
    const url = (await srv.listen()).replace(/\/$/, '');
    const page = async () => (await get(url + '/guide', { Host: 'a.example' })).body.toString();

    expect(await page()).toContain('guide one');
    expect(polling()).toBe(1);
    expect(logs.some((l) => l.includes('fs.watch is not available'))).toBe(true); // the file system reports nothing here

    now += 1000;
    await srv.recheck(); // a rescan: a request since the last one, so in use
    expect(polling()).toBe(1);
    now += SCAN_MS + 1;
    await srv.recheck(); // no request since the last rescan: idle
    expect(polling()).toBe(0);

    await setActive(store, 'v2'); // activated while idle: nothing polls, nothing reports
    expect(await page()).toContain('guide two'); // the request waited for its pointer to be looked at
    expect(logs.some((l) => l.includes('now serving v2 (was v1)'))).toBe(true);
    expect(polling()).toBe(1); // in use again: polled again

    // While it is idle again, its pointer is made a FIFO, then garbage: the request that wakes it is answered at
    // once from the version it serves (a read of a FIFO would wait for a writer), and the refusal is logged.
    for (const [what, make, said] of [
      ['a FIFO', () => execFileSync('mkfifo', [join(store, 'state.json')]), 'is a FIFO'],
      ['garbage', () => writeFile(join(store, 'state.json'), '{"active": 12'), 'is not valid JSON'],
    ] as const) {
      now += SCAN_MS + 1;
      await srv.recheck();
      expect(polling(), what).toBe(0);
      logs.length = 0;
      await rm(join(store, 'state.json'));
      await make();
      const t0 = performance.now();
      expect(await page(), what).toContain('guide two');
      expect(performance.now() - t0, what).toBeLessThan(5000); // a hang guard: a FIFO read never returns
      expect(logs.filter((l) => l.includes('state.json') && l.includes(said)).length, what).toBe(1); // read by the request
    }
  });
});
