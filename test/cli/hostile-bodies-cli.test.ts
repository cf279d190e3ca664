/**
 * Hostile JSON bodies against the running servers' JSON endpoints, through the binaries: the
 * relay (`serve --assistant-url`: assistant and search), the local search of an air-gapped
 * `serve`, and `emulate`'s API and controls. Wrong types, missing fields, huge strings, lists
 * where objects go: each is a 400 whose body names the field in words, never the validation
 * library's own wording.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAirlock, type Proc } from '../helpers/proc.js';
import { assistantBody, fixtureStore } from '../relay/helpers.js';

/** zod's default messages (v3 and v4 spellings): none may reach a reply. */
const LIBRARY_WORDING =
  /Invalid input|Invalid option|Invalid string|expected \w+, received|Expected \w+, received|Too big|Too small|Unrecognized key|Required|Number must|String must|Invalid enum|Invalid literal/;

let fx: Awaited<ReturnType<typeof fixtureStore>>;
const procs: Proc[] = [];
let emulator: string;
let adminKey: string;
let assistantKey: string;
let relay: string;
let local: string;

const origin = async (p: Proc) => (await p.waitFor(/(http:\/\/127\.0\.0\.1:\d+)/))[1]!;

beforeAll(async () => {
  fx = await fixtureStore();
  const emu = startAirlock(['emulate', '--port', '0']);
  procs.push(emu);
  emulator = (await emu.waitFor(/listening on (http:\/\/\S+?)\/?\s/))[1]!;
  adminKey = (await readFile((await emu.waitFor(/admin key file: +(\S+)/))[1]!, 'utf8')).trim();
  assistantKey = (await readFile((await emu.waitFor(/assistant key file: +(\S+)/))[1]!, 'utf8')).trim();
  const relayed = startAirlock(
    [
      'serve',
      '--store',
      fx.store,
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--deployment',
      'client-hosted',
      '--enable',
      'assistant',
      '--enable',
      'search',
      '--assistant-url',
      emulator,
    ],
    { env: { AIRLOCK_ASSISTANT_KEY: assistantKey, AIRLOCK_API_URL: '' } },
  );
  const gapped = startAirlock(['serve', '--store', fx.store, '--port', '0', '--host', '127.0.0.1', '--deployment', 'air-gapped']);
  procs.push(relayed, gapped);
  relay = await origin(relayed);
  local = await origin(gapped);
}, 60_000);
afterAll(async () => {
  for (const p of procs) {
    p.kill('SIGTERM');
    await p.exit(10_000);
  }
  await fx?.cleanup();
});

/** Far past every field's bound, yet under every body's size limit (those are a 413 of their own). */
const HUGE = 'x'.repeat(2_000);
/** Bodies that are JSON but not the request: each must be refused in words. */
const HOSTILE: Array<[string, unknown]> = [
  ['a list where the object goes', [1, 2, 3]],
  ['a string where the object goes', 'hello'],
  ['null', null],
  ['an empty object', {}],
  ['wrong types', { query: 42, pageSize: 'ten', messages: 'hi', fp: 7, currentPath: [] }],
  ['huge strings', { query: HUGE, fp: HUGE, currentPath: HUGE, domain: HUGE }],
  ['objects where strings go', { query: { $ne: null }, fp: {}, domain: { a: 1 }, version: [] }],
  ['a list of lists', { messages: [[[]]], query: [[]], paths: [[{}]] }],
];

async function refused(url: string, body: unknown, headers: Record<string, string> = {}): Promise<void> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  expect(res.status, `${url}: ${text.slice(0, 300)}`).toBe(400);
  expect(text, url).not.toMatch(LIBRARY_WORDING);
  const error = (JSON.parse(text) as { error: string }).error;
  expect(error, url).toMatch(/^invalid [\w ]+: \S/);
}

describe('hostile JSON bodies get a 400 in words (binaries)', () => {
  it('the relay: assistant and search', async () => {
    for (const [what, body] of HOSTILE) {
      await refused(`${relay}/discovery/v2/assistant/docs.example.com/message`, body).catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
      await refused(`${relay}/discovery/v2/search/docs.example.com`, body).catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
    }
    // one spoiled field of a valid body is named
    const res = await fetch(`${relay}/discovery/v2/assistant/docs.example.com/message`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(assistantBody({ fp: 12 })),
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: string }).error).toContain('fp: must be a text string');
  });

  it('the local search of an air-gapped server', async () => {
    for (const [what, body] of HOSTILE) {
      await refused(`${local}/_airlock/search/docs.example.com`, body).catch((e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      });
    }
    const res = await fetch(`${local}/_airlock/search/docs.example.com`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: 'x', pageSize: 'ten' }),
    });
    expect(((await res.json()) as { error: string }).error).toContain('pageSize: must be a number');
  });

  it('the emulator: export jobs, the assistant and its controls', async () => {
    for (const [what, body] of HOSTILE) {
      const fail = (e: Error) => {
        throw new Error(`${what}: ${e.message}`);
      };
      await refused(`${emulator}/v1/static-export/jobs`, body, { authorization: `Bearer ${adminKey}` }).catch(fail);
      await refused(`${emulator}/discovery/v2/assistant/docs.example.com/message`, body, { authorization: `Bearer ${assistantKey}` }).catch(fail);
      // every field of a faults patch is optional: an empty one is a valid patch that changes nothing
      if (what !== 'an empty object') await refused(`${emulator}/_emulator/faults`, body).catch(fail);
      await refused(`${emulator}/_emulator/agent-jobs`, body).catch(fail);
    }
  });

  it('a key named twice (a proxy taking the first would read another request): 400 naming the key, in words, at every JSON endpoint', async () => {
    const twice = async (url: string, text: string, key: string, headers: Record<string, string> = {}) => {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: text });
      const body = await res.text();
      expect(res.status, `${url}: ${body.slice(0, 300)}`).toBe(400);
      expect((JSON.parse(body) as { error: string }).error, url).toContain(`names the key "${key}" twice`);
    };
    const search = '{"query":"a","query":"b"}';
    await twice(`${local}/_airlock/search/docs.example.com`, search, 'query');
    await twice(`${relay}/discovery/v2/search/docs.example.com`, search, 'query');
    await twice(`${emulator}/v1/static-export/jobs`, '{"domain":"docs.example.com","domain":"x"}', 'domain', { authorization: `Bearer ${adminKey}` });
    await twice(`${emulator}/discovery/v2/assistant/docs.example.com/message`, '{"messages":[{"a":1,"a":2}]}', 'a', {
      authorization: `Bearer ${assistantKey}`,
    });
    await twice(`${emulator}/_emulator/faults`, '{"latencyMs":1,"latencyMs":2}', 'latencyMs');
    await twice(`${emulator}/_emulator/agent-jobs`, '{"x":1,"x":2}', 'x');
  });

  it('a body that is not JSON, or larger than the bound, gets the same words at every JSON endpoint (400, 413), never a schema message', async () => {
    const endpoints: Array<[string, Record<string, string>]> = [
      [`${local}/_airlock/search/docs.example.com`, {}],
      [`${relay}/discovery/v2/search/docs.example.com`, {}],
      [`${emulator}/v1/static-export/jobs`, { authorization: `Bearer ${adminKey}` }],
      [`${emulator}/discovery/v2/assistant/docs.example.com/message`, { authorization: `Bearer ${assistantKey}` }],
      [`${emulator}/_emulator/agent-jobs`, {}],
    ];
    for (const [url, headers] of endpoints) {
      const bad = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: '{' });
      expect(bad.status, url).toBe(400);
      expect(((await bad.json()) as { error: string }).error, url).toBe('request body is not valid JSON (1 bytes)');
      const big = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: `{"x":"${'y'.repeat(300 * 1024)}"}` });
      expect(big.status, url).toBe(413);
      expect(((await big.json()) as { error: string }).error, url).toMatch(/^request body larger than \d+ bytes$/);
    }
  });

  it('a client gone mid-body (closed, reset) at every JSON endpoint: no stack trace, no raw error on stderr, and the server keeps answering', async () => {
    const { connect } = await import('node:net');
    const before = procs.map((p) => p.stderr().length);
    const targets: Array<[string, string]> = [
      [local, '/_airlock/search/docs.example.com'],
      [relay, '/discovery/v2/assistant/docs.example.com/message'],
    ];
    for (const [base, path] of targets) {
      const { hostname, port } = new URL(base);
      for (const reset of [false, true]) {
        await new Promise<void>((done) => {
          const sock = connect(Number(port), hostname, () => {
            sock.write(`POST ${path} HTTP/1.1\r\nHost: ${hostname}:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"q`);
            setTimeout(() => (reset ? sock.resetAndDestroy() : sock.destroy(), done()), 50);
          });
          sock.on('error', () => {});
        });
      }
    }
    await new Promise((r) => setTimeout(r, 300));
    for (const [i, p] of procs.entries()) expect(p.stderr().slice(before[i])).not.toMatch(/\n\s+at |ECONNRESET|Error: aborted/);
    expect(
      (await fetch(local + '/_airlock/search/docs.example.com', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"x"}' }))
        .status,
    ).not.toBe(500);
  });
});
