import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { HOST_NAME } from '../package/label.js';
import { loadPublicKeyText } from '../package/keys.js';
import { numberOption } from '../util/number-option.js';
import { checkKeysLive, newPolicy, parsePolicy } from './policy.js';

/** Distinct signers a policy may require, default and per domain. */
export const THRESHOLD = { min: 1, max: 64 };

/** What `trust init` and `trust draft` give: --key NAME=PUBFILE[@EXPIRES]..., --threshold, --domain-threshold D=N..., --identity. */
export interface PolicyFlags {
  key?: string[];
  threshold?: number;
  'domain-threshold'?: string[];
  identity?: string;
}

/**
 * A policy document from the flags (files relative to `cwd`), checked as every policy is: its
 * mistakes (threshold above the key count, a bad key, a key already expired) are usage errors (2).
 */
export async function policyFromFlags(v: PolicyFlags, cwd: string, serial: number): Promise<Buffer> {
  const keys = await Promise.all(
    (v.key ?? []).map(async (spec) => {
      const m = /^([^=]+)=([^@]+)(?:@(.+))?$/.exec(spec);
      if (!m) throw new UsageError(`--key takes NAME=PUBFILE[@EXPIRES], got ${JSON.stringify(spec)}`, { subject: '--key' });
      if (m[3] !== undefined && !Number.isFinite(Date.parse(m[3])))
        throw new UsageError(`--key ${m[1]}: ${JSON.stringify(m[3])} is not an RFC 3339 time`, { subject: '--key' });
      // The public key as parsed and re-exported (SPKI PEM): a private key is refused, never written.
      const { pem } = await loadPublicKeyText(resolve(cwd, m[2]!), { shown: m[2]!, flag: '--key' });
      return { name: m[1]!, pem, expiresAt: m[3] ? new Date(m[3]).toISOString() : null };
    }),
  );
  if (!keys.length) throw new UsageError('a policy needs at least one --key NAME=PUBFILE', { subject: '--key' });
  if (v.threshold === undefined) throw new UsageError('missing required --threshold', { subject: '--threshold' });
  const threshold = v.threshold;
  const domains: Record<string, number> = {};
  for (const spec of v['domain-threshold'] ?? []) {
    const m = /^([^=]*)=(.*)$/.exec(spec);
    if (!m || !HOST_NAME.test(m[1]!))
      throw new UsageError(`--domain-threshold takes D=N with D a host name and N a number, got ${JSON.stringify(spec)}`, { subject: '--domain-threshold' });
    const domain = m[1]!.toLowerCase(); // as manifests spell it (DOMAIN): a rule for DOCS.X is the rule for docs.x
    if (Object.hasOwn(domains, domain)) throw new UsageError(`--domain-threshold ${domain} given twice`, { subject: '--domain-threshold' });
    domains[domain] = numberOption(m[2], '--domain-threshold', THRESHOLD)!;
  }
  const bytes = newPolicy({ keys, threshold, domains, identity: v.identity ?? null, serial });
  let parsed;
  try {
    parsed = parsePolicy(bytes, 'the policy'); // the flags' mistakes (threshold above the key count, a bad key) are usage errors here
  } catch (err) {
    throw new UsageError((err as Error).message, { subject: 'argv' });
  }
  checkKeysLive(parsed, new Date());
  return bytes;
}
