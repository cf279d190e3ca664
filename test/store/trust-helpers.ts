import { sign, type KeyObject } from 'node:crypto';
import { newPolicy } from '../../src/store/policy.js';
import { initPolicy } from '../../src/store/trust-ops.js';
import { readAudit } from '../../src/store/audit.js';
import { addSignature } from '../../src/package/sign.js';
import { buildPackage, sampleSite, treeDigest } from './helpers.js';
import type { Pair } from '../helpers/multisig.js';

/** Test helpers for the trust policy's store tests. */
export interface Named extends Pair {
  name: string;
}

export async function installPolicy(
  store: string,
  keys: Named[],
  threshold: number,
  o: { identity?: string; domains?: Record<string, number>; expired?: string[] } = {},
): Promise<Buffer> {
  const bytes = newPolicy({
    keys: keys.map((k) => ({ name: k.name, pem: k.pem, expiresAt: o.expired?.includes(k.name) ? '2020-01-01T00:00:00.000Z' : null })),
    threshold,
    domains: o.domains,
    identity: o.identity ?? null,
  });
  // A key that expired since: installed while it was live (an expired key cannot be installed).
  await initPolicy(store, bytes, [], o.expired?.length ? { now: new Date('2019-01-01T00:00:00Z') } : {});
  return bytes;
}

export const signBytes = (bytes: Buffer, keys: KeyObject[]): Buffer[] => keys.map((k) => sign(null, bytes, k));

/** A package signed by each of `signers` (in order), with manifest fields set before signing. */
export async function signedPackage(
  dir: string,
  version: string,
  signers: Pair[],
  fields: { sequence?: number; expiresAt?: string; audience?: string; domain?: string; createdAt?: string } = {},
): Promise<string> {
  const { domain, ...rest } = fields;
  const pkg = await buildPackage(dir, {
    version,
    files: sampleSite(version),
    domain,
    name: `${version}-${Math.random().toString(36).slice(2, 8)}.airlock`,
    tamper: (m) => Object.assign(m, rest),
  });
  for (const s of signers) await addSignature(pkg, s.priv);
  return pkg;
}

/** Digest of everything in the store except the audit log and its head (which a refusal changes). */
export const storeDigest = (root: string): Promise<string> => treeDigest(root);

export async function lastAudit(store: string) {
  const lines = await readAudit(store);
  return lines[lines.length - 1]!;
}
