import { sign } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { HOST_NAME, fingerprint, loadPrivateKey } from '../package/index.js';
import { parsePolicy } from '../store/policy.js';
import { describePolicy, initPolicy, loadPolicy, newPolicy, readNewPolicy, readSeen, resolveStore, rotatePolicy, verifyChain } from '../store/index.js';
import { parse, parseIntFlag, requireString } from './args.js';
import { printResult, type CliContext } from './context.js';
import { shown } from '../util/terminal.js';
import type { Command } from './main.js';

const USAGE = `usage: airlock trust init   --store DIR --key NAME=PUBFILE[@EXPIRES]... --threshold N [--domain-threshold D=N]... [--identity ID] [--sign-key KEYFILE]... [--json]
       airlock trust draft  --key NAME=PUBFILE[@EXPIRES]... --threshold N [--domain-threshold D=N]... [--identity ID] --serial N --out NEW.json
       airlock trust sign   POLICY.json --key KEYFILE --out SIGFILE
       airlock trust rotate --store DIR --policy NEW.json [--sig SIGFILE]... [--json]
       airlock trust show   --store DIR [--json]

The store's trust policy (STORE/trust/policy.json; every accepted policy is kept in STORE/trust/chain/):
named Ed25519 public keys (optionally expiring), how many DISTINCT keys must sign a package (a
default, and per-domain overrides: 2 is the two-person rule), and the store's identity (a package
built with --audience ID imports only into the store named ID). With a policy, import and verify
--store count only the policy's live keys (--trust and STORE/trusted-keys/ no longer apply) and
refuse packages for another store. Every store, with a policy or not, refuses downgrades and
expired packages and writes every import, refusal, activation, rollback, prune and policy change
to the hash-chained STORE/audit.log. A delta package is admitted as its full target package would
be: its target signatures count (airlock sign DELTA adds one), and its own manifest must be signed
by a live key of the policy.

  init     install the first policy (serial 1) into the store (created when missing)
  draft    write a new policy document (for rotate) without installing it
  sign     write the raw 64-byte Ed25519 signature of the exact bytes of POLICY.json (the same as
           openssl pkeyutl -sign -rawin -inkey KEY -in POLICY.json -out SIGFILE)
  rotate   replace the policy: NEW.json must carry a higher serial and signatures by at least
           threshold.default distinct live keys of the CURRENT policy (--sig files, or NEW.json as
           a signed envelope {format: "airlock-signed-policy/1", policy, signatures})
  show     the current policy, its chain (each rotation re-checked) and the highest sequence seen per domain

  --key NAME=PUBFILE[@EXPIRES]   a key (SPKI PEM, airlock keygen's .pub); @EXPIRES: an RFC 3339 time after
                                  which its signatures no longer count
  --threshold N                   distinct signers a package needs (and a rotation)
  --domain-threshold D=N          another threshold for domain D
  --identity ID                   the store's identity (a package's --audience)

Exit codes: 0 ok, 1 failure, 2 usage (e.g. a policy exists already), 4 the policy or a rotation was
refused (malformed, too few signers, serial not above the current one).`;

interface Values { key?: string[]; threshold?: string; 'domain-threshold'?: string[]; identity?: string; serial?: string }

async function policyFromFlags(v: Values, ctx: CliContext, serial: number): Promise<Buffer> {
  const keys = await Promise.all((v.key ?? []).map(async (spec) => {
    const m = /^([^=]+)=([^@]+)(?:@(.+))?$/.exec(spec);
    if (!m) throw new UsageError(`--key takes NAME=PUBFILE[@EXPIRES], got ${JSON.stringify(spec)}`, { subject: '--key' });
    const pem = await readFile(resolve(ctx.cwd, m[2]!), 'utf8').catch((err: NodeJS.ErrnoException) => {
      throw new UsageError(`cannot read key file ${m[2]}: ${err.code ?? err.message}`, { subject: m[2] });
    });
    if (m[3] !== undefined && !Number.isFinite(Date.parse(m[3]))) throw new UsageError(`--key ${m[1]}: ${JSON.stringify(m[3])} is not an RFC 3339 time`, { subject: '--key' });
    return { name: m[1]!, pem, expiresAt: m[3] ? new Date(m[3]).toISOString() : null };
  }));
  if (!keys.length) throw new UsageError('a policy needs at least one --key NAME=PUBFILE', { subject: '--key' });
  const threshold = parseIntFlag(requireString(v.threshold, '--threshold'), '--threshold', 1, 64)!;
  const domains: Record<string, number> = {};
  for (const spec of v['domain-threshold'] ?? []) {
    const [d, n] = spec.split('=');
    if (!d || !HOST_NAME.test(d)) throw new UsageError(`--domain-threshold takes D=N with D a host name, got ${JSON.stringify(spec)}`, { subject: '--domain-threshold' });
    domains[d] = parseIntFlag(n, '--domain-threshold', 1, 64)!;
  }
  const bytes = newPolicy({ keys, threshold, domains, identity: v.identity ?? null, serial });
  try {
    parsePolicy(bytes, 'the policy'); // the flags' mistakes (threshold above the key count, a bad key) are usage errors here
  } catch (err) {
    throw new UsageError((err as Error).message, { subject: 'argv' });
  }
  return bytes;
}

const common = { store: { type: 'string' }, json: { type: 'boolean' }, key: { type: 'string', multiple: true }, threshold: { type: 'string' },
  'domain-threshold': { type: 'string', multiple: true }, identity: { type: 'string' }, 'sign-key': { type: 'string', multiple: true },
  serial: { type: 'string' }, out: { type: 'string' }, policy: { type: 'string' }, sig: { type: 'string', multiple: true } } as const;

const command: Command = {
  summary: 'the store\'s trust policy: keys, thresholds, rotation (issue 14)',
  usage: USAGE,
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    const { values, positionals } = parse(rest, common);
    const json = Boolean(values.json);
    const store = () => resolveStore(values.store, ctx.env, ctx.cwd);
    switch (sub) {
      case 'init': {
        const bytes = await policyFromFlags(values, ctx, 1);
        const keys = await Promise.all((values['sign-key'] ?? []).map((p) => loadPrivateKey(resolve(ctx.cwd, p))));
        const p = await initPolicy(store(), bytes, keys.map((k) => sign(null, bytes, k)));
        printResult(ctx, json, { ok: true, store: store(), serial: 1, keys: p.keys.map((k) => ({ name: k.name, fingerprint: k.fingerprint, expiresAt: k.expiresAt })), threshold: p.policy.threshold, identity: p.policy.identity },
          () => shown`trust policy 1 installed in ${store()}: ${describePolicy(p)}`);
        return 0;
      }
      case 'draft': {
        const serial = parseIntFlag(requireString(values.serial, '--serial'), '--serial', 1)!;
        const out = resolve(ctx.cwd, requireString(values.out, '--out'));
        await writeFile(out, await policyFromFlags(values, ctx, serial), { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot write ${out}: ${err.code ?? err.message}`, { subject: out });
        });
        printResult(ctx, json, { ok: true, policy: out, serial }, () => shown`wrote ${out} (serial ${serial}); sign it with airlock trust sign, then airlock trust rotate`);
        return 0;
      }
      case 'sign': {
        if (positionals.length !== 1) throw new UsageError('trust sign takes exactly one POLICY.json', { subject: 'POLICY' });
        const key = await loadPrivateKey(resolve(ctx.cwd, requireString(values.key?.[0], '--key')));
        const bytes = await readFile(resolve(ctx.cwd, positionals[0]!));
        const out = resolve(ctx.cwd, requireString(values.out, '--out'));
        await writeFile(out, sign(null, bytes, key), { flag: 'wx' }).catch((err: NodeJS.ErrnoException) => {
          throw new UsageError(`cannot write ${out}: ${err.code ?? err.message}`, { subject: out });
        });
        printResult(ctx, json, { ok: true, signature: out, signer: fingerprint(key) }, () => shown`wrote ${out} (signed by ${fingerprint(key)})`);
        return 0;
      }
      case 'rotate': {
        const path = resolve(ctx.cwd, requireString(values.policy, '--policy'));
        const bytes = await readFile(path).catch((err: NodeJS.ErrnoException) => { throw new UsageError(`cannot read ${path}: ${err.code ?? err.message}`, { subject: path }); });
        const sigs = await Promise.all((values.sig ?? []).map((p) => readFile(resolve(ctx.cwd, p)).catch((err: NodeJS.ErrnoException) => { throw new UsageError(`cannot read ${p}: ${err.code ?? err.message}`, { subject: p }); })));
        const r = await rotatePolicy(store(), readNewPolicy(bytes, sigs, path));
        printResult(ctx, json, { ok: true, store: store(), ...r }, () => shown`trust policy ${r.previous} -> ${r.serial}, signed by ${r.signers.join(', ')}`);
        return 0;
      }
      case 'show': {
        const s = store();
        const p = await loadPolicy(s);
        if (!p) {
          printResult(ctx, json, { ok: true, store: s, policy: null }, () => shown`store ${s} has no trust policy: imports need one key of --trust or ${s}/trusted-keys/*.pub`);
          return 0;
        }
        const chain = await verifyChain(s);
        const seen = await readSeen(s);
        const now = Date.now();
        const keys = p.keys.map((k) => ({ name: k.name, fingerprint: k.fingerprint, expiresAt: k.expiresAt, live: k.expiresAt === null || Date.parse(k.expiresAt) > now }));
        printResult(ctx, json, { ok: chain.ok, store: s, serial: p.policy.serial, createdAt: p.policy.createdAt, identity: p.policy.identity, threshold: p.policy.threshold, keys, chain, seen: seen.domains }, () => [
          shown`policy ${p.policy.serial} (${p.policy.createdAt})${p.policy.identity ? shown`, store identity ${p.policy.identity}` : ''}`,
          shown`threshold ${p.policy.threshold.default}` + Object.entries(p.policy.threshold.domains).map(([d, n]) => shown`, ${d}: ${n}`).join(''),
          ...keys.map((k) => shown`key ${k.name} ${k.fingerprint}` + (k.expiresAt ? shown` expires ${k.expiresAt}` : '') + (k.live ? '' : ' (EXPIRED: does not count)')),
          `chain ${chain.serials.join(' -> ') || '(empty)'}: ${chain.ok ? 'every rotation signed by its predecessor\'s threshold' : shown`BROKEN: ${chain.problem ?? ''}`}`,
          ...Object.entries(seen.domains).map(([d, v]) => shown`seen ${d}: sequence ${v.sequence} (${v.version})`),
        ].join('\n'));
        return chain.ok ? 0 : 4;
      }
      default:
        throw new UsageError(`trust takes init, draft, sign, rotate or show, got ${JSON.stringify(sub ?? '')}`, { subject: 'trust' });
    }
  },
};
export default command;
