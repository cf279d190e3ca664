import { describe, expect, it } from 'vitest';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BodyCache } from '../../src/serve/body-cache.js';
import { sendFile } from '../../src/serve/send-file.js';
import { Rep } from '../../src/serve/rep.js';
import type { FileEntry, LoadedIndex } from '../../src/serve/version-index.js';
import { openDescriptors, within } from '../helpers/hang-up.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sendFile', () => {
  it('a reader gone while a large page was still being transformed: no throw, nothing written, the file is closed', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-send-'));
    const file = join(dir, 'big-page.html');
    await writeFile(file, Buffer.alloc(256 * 1024, 'a'));
    const rep = new Rep(file, null, 256 * 1024, null, {
      base: [],
      contentType: 'text/html; charset=utf-8',
      cacheControl: 'no-cache',
      lastModified: new Date(0).toUTCString(),
      vary: false,
      sha256: 'ab'.repeat(32),
    });
    const ready: FileEntry = {
      path: '/big-page.html',
      sha256: 'ab'.repeat(32),
      lastModifiedSec: 0,
      identity: rep,
      br: null,
      gzip: null,
      has: { br: false, gzip: false },
      resolve: null,
    };
    let gone!: () => void;
    const clientGone = new Promise<void>((resolve) => (gone = resolve));
    // The page is "transformed" only after the reader hung up: the response is destroyed by then.
    const pending: FileEntry = { ...ready, resolve: () => clientGone.then(() => ready) };
    const idx = { base: [], source: { root: null } } as unknown as LoadedIndex;
    const errors: unknown[] = [];
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.on('uncaughtException', onUncaught);
    let served: ServerResponse | undefined;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      served = res;
      res.once('close', () => gone());
      sendFile(req, res, idx, pending, false, { cache: new BodyCache(0), smallMax: 1024, onError: (e) => errors.push(e) });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = request({ host: '127.0.0.1', port, path: '/big-page.html' });
      client.on('error', () => {});
      client.end();
      for (let i = 0; i < 1000 && served === undefined; i++) await wait(10);
      expect(served, 'the request reached the server').toBeDefined();
      client.destroy();
      await within(clientGone, 10_000, 'the response closing');
      await wait(50); // the stream opens the file, then must close it without writing
      expect(uncaught).toEqual([]);
      expect(errors).toEqual([]);
      expect(served!.headersSent).toBe(false);
      expect(await openDescriptors((t) => t === file)).toBe(0);
    } finally {
      process.off('uncaughtException', onUncaught);
      await new Promise((resolve) => server.close(resolve));
      await rm(dir, { recursive: true, force: true });
    }
  });
});
