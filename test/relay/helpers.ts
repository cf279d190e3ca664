import { mkdtemp, rm } from 'node:fs/promises';
import { afterAll, beforeAll } from 'vitest';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveFeatures, type ResolvedFeatures } from '../../src/features/index.js';
import { createRelay, type Relay, type RelayOptions } from '../../src/relay/index.js';
import { createAirlockServer, type AirlockServer } from '../../src/serve/index.js';
import { featureOptions } from '../../src/serve/features.js';
import { importPackage } from '../../src/store/index.js';
import { makePackage } from '../helpers/make-package.js';

/** A store holding the committed fixture site (docs.example.com) as active version v1: the real chain. */
export async function fixtureStore(): Promise<{ root: string; store: string; cleanup(): Promise<void> }> {
  const root = await mkdtemp(join(tmpdir(), 'airlock-relay-'));
  const { pkgPath } = await makePackage({ outDir: join(root, 'pkg') });
  const store = join(root, 'store');
  await importPackage(pkgPath, { store, trust: [], allowUnsigned: true, activate: true });
  return { root, store, cleanup: () => rm(root, { recursive: true, force: true }) };
}

/** The fixture store for one test file: made before its tests, removed after them. */
export function fixtureStoreForFile(): { readonly store: string } {
  let fx: Awaited<ReturnType<typeof fixtureStore>> | undefined;
  beforeAll(async () => {
    fx = await fixtureStore();
  });
  afterAll(async () => {
    await fx?.cleanup();
  });
  return {
    get store() {
      return fx!.store;
    },
  };
}

export interface Running {
  url: string;
  /** http://127.0.0.1:PORT without the trailing slash. */
  origin: string;
  srv: AirlockServer;
  relay: Relay | null;
  resolved: ResolvedFeatures;
  close(): Promise<void>;
}

export type RelaySettings = Omit<RelayOptions, 'resolved'>;

/** The airlock server in-process on 127.0.0.1:0, wired like `airlock serve` (featureOptions + relay). */
export async function startAirlock(store: string, features: { deployment?: string; enable?: string[] }, relay?: RelaySettings): Promise<Running> {
  const resolved = resolveFeatures(features);
  const r = relay ? createRelay({ ...relay, resolved }) : null;
  const srv = await createAirlockServer({ store, lease: false, log: () => {}, ...featureOptions(resolved, r) });
  const url = await srv.listen(0, '127.0.0.1');
  return {
    url,
    origin: url.replace(/\/$/, ''),
    srv,
    relay: r,
    resolved,
    close: async () => {
      await srv.close(1000);
      await r?.close();
    },
  };
}

/** A valid assistant body (the service's schema), to be spoiled by tests. */
export function assistantBody(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    fp: 'fp-test',
    messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'How do I rotate an access token?' }] }],
    currentPath: '/getting-started',
    ...over,
  };
}

export function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}
