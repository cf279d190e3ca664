import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { KeyObject } from 'node:crypto';
import { loadPublicKey } from '../package/keys.js';
import { storePaths } from './paths.js';
import { UsageError } from '../errors.js';
import { describeFsError } from '../util/fsx.js';

/** Keys trusted for import by this store: every S/trusted-keys/*.pub (a missing folder is none; a private key there is refused). */
export async function loadTrustedKeys(store: string): Promise<KeyObject[]> {
  const dir = storePaths(store).trustedKeys;
  const names = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [] as string[];
    throw new UsageError(`${dir} ${describeFsError(err)}`, { subject: dir });
  });
  const keys: KeyObject[] = [];
  const advice = `every ${dir}/*.pub must be an Ed25519 public key: remove it from ${dir} or replace it with airlock keygen's .pub file`;
  for (const name of names.filter((n) => n.endsWith('.pub')).sort()) keys.push(await loadPublicKey(join(dir, name), { advice }));
  return keys;
}
