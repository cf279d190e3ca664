import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getEventListeners } from 'node:events';
import type { IncomingMessage } from 'node:http';
import { createLocalAssistant } from '../../src/assistant/route.js';
import type { LocalSearch } from '../../src/search/service.js';
import type { LoadedIndex } from '../../src/serve/version-index.js';
import { capture } from '../../src/serve/handler.js';
import { startEmulator, type RunningEmulator } from '../../src/emulator/server.js';

/**
 * The local assistant's route in-process (the binary's behaviour is in test/cli/local-assistant-cli.test.ts):
 * what it leaves behind once an answer is over.
 */
let emu: RunningEmulator;
beforeAll(async () => {
  emu = await startEmulator();
});
afterAll(async () => {
  await emu.close();
});

const DOMAIN = 'docs.example.com';
const search = {
  query: async () => ({
    status: 'ready',
    hits: [
      {
        path: '/guide/install',
        content: '',
        metadata: { title: 'Install', heading: 'Install', anchor: null, page: '/guide/install', score: 1 },
        text: 'Run the installer.',
      },
    ],
  }),
} as unknown as LocalSearch;
const incoming = { socket: { remoteAddress: '127.0.0.1' } } as unknown as IncomingMessage;
capture(incoming, { domain: DOMAIN, source: {}, routes: new Map([['/guide/install', {}]]) } as unknown as LoadedIndex, null);

describe('the local assistant route', () => {
  it('a search that did not answer (busy, timed out) is a 503 saying so, not "being prepared"', async () => {
    const busy = { query: async () => ({ status: 'failed', error: 'no answer within 5000 ms', retryAfterSec: 1 }) } as unknown as LocalSearch;
    const { app } = createLocalAssistant({ model: { url: `${emu.url}/v1`, name: 'stand-in', key: null } }, busy);
    const res = await app.fetch(
      new Request(`http://127.0.0.1/discovery/v2/assistant/${DOMAIN}/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ fp: 'fp', messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text: 'install' }] }] }),
      }),
      { incoming },
    );
    expect([res.status, res.headers.get('retry-after'), ((await res.json()) as { error: string }).error]).toEqual([
      503,
      '1',
      'the search of this site is busy or failed; ask again shortly',
    ]);
  });

  it("leaves no listener on the reader's request signal once the answer is over (it held the answer and its question alive)", async () => {
    const { app } = createLocalAssistant({ model: { url: `${emu.url}/v1`, name: 'stand-in', key: null } }, search);
    for (const status of ['answered', 'refused'] as const) {
      const req = new Request(`http://127.0.0.1/discovery/v2/assistant/${DOMAIN}/message`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          fp: 'fp',
          messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text: 'install '.repeat(status === 'answered' ? 1 : 0) }] }],
        }),
      });
      const res = await app.fetch(req, { incoming });
      const text = await res.text();
      if (status === 'answered') expect(text).toContain('"type":"finish"');
      expect(getEventListeners(req.signal, 'abort'), status).toHaveLength(0);
    }
  });
});
