import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startEmulator, type RunningEmulator } from '../emulator/index.js';
import { fetchPackage, type FetchEvent, type FetchSummary } from '../fetch/index.js';
import { generateKeyPair, loadPrivateKey, loadPublicKey } from '../package/index.js';
import { buildVariants, importPackage, type ImportResult } from '../store/index.js';
import { ServiceClient } from '../upstream/index.js';

/** The demo's fixed domain: the committed fixture site (fixtures/site) that the emulator serves. */
export const DEMO_DOMAIN = 'docs.example.com';

export interface ChainResult {
  emulator: RunningEmulator;
  store: string;
  fetched: FetchSummary;
  imported: ImportResult;
  publicKey: string;
}

/**
 * The whole connected → isolated chain on the embedded stand-in, with the same library calls the
 * commands make: emulate, keygen, fetch (signed), import (trusting only that key), precompress.
 * The emulator's admin key stays in this process: it is handed to the client, never printed.
 */
export async function runChain(dir: string, step: (line: string) => void, onFetchEvent?: (e: FetchEvent) => void, signal?: AbortSignal): Promise<ChainResult> {
  const emulator = await startEmulator();
  try {
    signal?.throwIfAborted();
    step(`emulate: the stand-in service is at ${emulator.url}`);
    await mkdir(join(dir, 'keys'), { recursive: true });
    const keys = await generateKeyPair(join(dir, 'keys', 'demo'));
    step(`keygen:  ${keys.keyPath} (private, 0600) and ${keys.pubPath} (${keys.fingerprint})`);

    const client = new ServiceClient({ baseUrl: emulator.url, adminKey: emulator.keys.admin });
    const fetched = await fetchPackage({
      client,
      domain: DEMO_DOMAIN,
      outDir: join(dir, 'packages'),
      signKey: await loadPrivateKey(keys.keyPath),
      onEvent: onFetchEvent,
      signal,
    });
    step(`fetch:   ${fetched.package} (${fetched.files} files, ${fetched.archive.format}, signed)`);

    signal?.throwIfAborted();
    const store = join(dir, 'store');
    const imported = await importPackage(fetched.package, { store, trust: [await loadPublicKey(keys.pubPath)], activate: true, signal });
    const variants = await buildVariants(store, imported.version, { signal });
    signal?.throwIfAborted();
    step(`import:  version ${imported.version} into ${store}, active; ${variants.br} brotli and ${variants.gz} gzip variants`);
    return { emulator, store, fetched, imported, publicKey: keys.pubPath };
  } catch (err) {
    await emulator.close();
    throw err;
  }
}
