import { execFileSync } from 'node:child_process';
import { sign, type KeyObject } from 'node:crypto';
import { join } from 'node:path';
import { expect } from 'vitest';
import { newPolicy } from '../../src/store/policy.js';
import { initPolicy } from '../../src/store/trust-ops.js';
import { readAudit } from '../../src/store/audit.js';
import { addSignature } from '../../src/package/sign.js';
import { buildPackage, sampleSite, treeDigest } from './helpers.js';
import type { Pair } from '../helpers/multisig.js';
import { airlock } from '../helpers/bin.js';
import { FIXTURE_SITE } from '../helpers/make-package.js';

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

/** What the trust CLI tests start from, in `dir`: the fixture site as site.tgz and key pairs a, b, c and d (`airlock keygen`). */
export function siteAndSigners(dir: string): void {
  execFileSync('tar', ['-czf', join(dir, 'site.tgz'), '-C', FIXTURE_SITE, '.']);
  for (const k of ['a', 'b', 'c', 'd']) expect(airlock(['keygen', '--out', k], { cwd: dir }).status).toBe(0);
}

/** `--key NAME=X.pub` for each named signer of siteAndSigners: alice=a.pub, bob=b.pub, carol=c.pub, dave=d.pub. */
export const keyArgs = (...names: string[]): string[] => names.flatMap((name) => ['--key', `${name}=${name[0]}.pub`]);
