import { sign } from 'node:crypto';
import { stat, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { UsageError, outputExists } from '../errors.js';
import { escapeControls } from '../util/terminal.js';
import { HOST_NAME } from '../package/label.js';
import { fingerprint, loadPrivateKey } from '../package/keys.js';
import { loadPublicKeyText } from '../package/keys.js';
import { POLICY_BOUNDS, checkKeysLive, loadPolicyChain, parsePolicy, policyFileRule } from '../store/policy.js';
import { describe as describePolicy, initPolicy, readNewPolicy, rotatePolicy } from '../store/trust-ops.js';
import { newPolicy } from '../store/policy.js';
import { readSeen } from '../store/admit.js';
import { resolveStore } from '../store/paths.js';
import { describeFsError, readRegularFile } from '../util/fsx.js';
import { numeric, parse, parseIntFlag, requireString } from './args.js';
import { checkOutFile } from './out-file.js';
import { printResult, type CliContext, type Command } from './context.js';
import { shown } from '../util/terminal.js';

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

  --key NAME=PUBFILE[@EXPIRES]   a public key (SPKI PEM, airlock keygen's .pub; a private key is refused);
                                  @EXPIRES: an RFC 3339 time, in the future, after which its
                                  signatures no longer count
  --threshold N                   distinct signers a package needs (and a rotation)
  --domain-threshold D=N          another threshold for domain D
  --identity ID                   the store's identity (a package's --audience)

A store that has had a policy keeps it: every use re-checks the chain from its root (serial 1), and
a missing policy.json, a missing, edited or out-of-order chain entry, or a policy.json that is not
the chain's last entry stops imports (AIRLOCK_POLICY_BROKEN) until STORE/trust/ is restored.

draft and sign never replace their --out: exit 2 (AIRLOCK_EXISTS), like every output of every
command; choose another --out.

Exit codes: 0 ok, 1 failure, 2 usage (e.g. a policy exists already, an --out already there, a private key given as --key,
a key that has already expired), 4 the policy or a rotation was refused (malformed, too few
signers, serial not the next one) or the store's policy chain is broken.`;

interface Values { key?: string[]; threshold?: string; 'domain-threshold'?: string[]; identity?: string; serial?: string }

async function policyFromFlags(v: Values, ctx: CliContext, serial: number): Promise<Buffer> {
  const keys = await Promise.all((v.key ?? []).map(async (spec) => {
    const m = /^([^=]+)=([^@]+)(?:@(.+))?$/.exec(spec);
    if (!m) throw new UsageError(`--key takes NAME=PUBFILE[@EXPIRES], got ${JSON.stringify(spec)}`, { subject: '--key' });
    if (m[3] !== undefined && !Number.isFinite(Date.parse(m[3]))) throw new UsageError(`--key ${m[1]}: ${JSON.stringify(m[3])} is not an RFC 3339 time`, { subject: '--key' });
    // The public key as parsed and re-exported (SPKI PEM): a private key is refused, never written.
    const { pem } = await loadPublicKeyText(resolve(ctx.cwd, m[2]!), { shown: m[2]!, flag: '--key' });
    return { name: m[1]!, pem, expiresAt: m[3] ? new Date(m[3]).toISOString() : null };
  }));
  if (!keys.length) throw new UsageError('a policy needs at least one --key NAME=PUBFILE', { subject: '--key' });
  const threshold = parseIntFlag(requireString(v.threshold, '--threshold'), '--threshold', THRESHOLD.min, THRESHOLD.max)!;
  const domains: Record<string, number> = {};
  for (const spec of v['domain-threshold'] ?? []) {
    const m = /^([^=]*)=(.*)$/.exec(spec);
    if (!m || !HOST_NAME.test(m[1]!)) throw new UsageError(`--domain-threshold takes D=N with D a host name and N a number, got ${JSON.stringify(spec)}`, { subject: '--domain-threshold' });
    if (Object.hasOwn(domains, m[1]!)) throw new UsageError(`--domain-threshold ${m[1]} given twice`, { subject: '--domain-threshold' });
    domains[m[1]!] = parseIntFlag(m[2], '--domain-threshold', THRESHOLD.min, THRESHOLD.max)!;
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

/** A raw Ed25519 signature is 64 bytes; a signature file is never read past this. */
const MAX_SIG_FILE = 4096;

/** A file the user named: regular, bounded, never blocking; refused in plain words naming it as given (exit 2). */
function readUserFile(ctx: CliContext, given: string, maxBytes: number): Promise<Buffer> {
  return readRegularFile(resolve(ctx.cwd, given), { maxBytes, refuse: (why) => new UsageError(`${given} ${why}`, { subject: given }) });
}

/**
 * A policy document the user hands to trust rotate: unreadable is a usage error (exit 2); larger
 * than the one policy limit is the policy's fault (AIRLOCK_BAD_POLICY, exit 4, as on any read).
 */
async function readPolicyDocument(ctx: CliContext, given: string): Promise<Buffer> {
  const path = resolve(ctx.cwd, given);
  const rule = policyFileRule(given);
  return readRegularFile(path, { maxBytes: rule.maxBytes, refuse: (why) => new UsageError(`${given} ${why}`, { subject: given }) }).catch(async (err: unknown) => {
    // Only the size refusal is the document's fault: told apart by the file's size, not by words.
    const size = await stat(path).then((st) => (st.isFile() ? st.size : 0), () => 0);
    throw size > rule.maxBytes ? rule.refuse(`is ${size} bytes, more than the limit of ${rule.maxBytes}`) : err;
  });
}

const cannotWrite = (out: string) => (err: unknown): never => {
  if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw outputExists(out, 'choose another --out');
  throw new UsageError(`cannot write ${out}: ${describeFsError(err, 'write')}`, { subject: out });
};

/** Distinct signers a policy may require, default and per domain. */
const THRESHOLD = { min: 1, max: 64 };

const common = { store: { type: 'string' }, json: { type: 'boolean' }, key: { type: 'string', multiple: true }, threshold: numeric(THRESHOLD),
  'domain-threshold': { type: 'string', multiple: true }, identity: { type: 'string' }, 'sign-key': { type: 'string', multiple: true },
  serial: numeric({ min: 1 }), out: { type: 'string' }, policy: { type: 'string' }, sig: { type: 'string', multiple: true } } as const;

const command: Command = {
  summary: 'the store\'s trust policy: keys, thresholds, rotation',
  usage: USAGE,
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    const { values, positionals } = parse(rest, common);
    const json = Boolean(values.json);
    const store = () => resolveStore(values.store, ctx.env, ctx.cwd);
    switch (sub) {
      case 'init': {
        const bytes = await policyFromFlags(values, ctx, 1);
        const keys = await Promise.all((values['sign-key'] ?? []).map((p) => loadPrivateKey(resolve(ctx.cwd, p), { shown: p, flag: '--sign-key' })));
        const p = await initPolicy(store(), bytes, keys.map((k) => sign(null, bytes, k)));
        printResult(ctx, json, { ok: true, store: store(), serial: 1, keys: p.keys.map((k) => ({ name: k.name, fingerprint: k.fingerprint, expiresAt: k.expiresAt })), threshold: p.policy.threshold, identity: p.policy.identity },
          () => shown`trust policy 1 installed in ${store()}: ${describePolicy(p)}`);
        return 0;
      }
      case 'draft': {
        const serial = parseIntFlag(requireString(values.serial, '--serial'), '--serial', 1)!;
        const out = resolve(ctx.cwd, requireString(values.out, '--out'));
        await checkOutFile(out, { flag: '--out', force: false });
        await writeFile(out, await policyFromFlags(values, ctx, serial), { flag: 'wx' }).catch(cannotWrite(out));
        printResult(ctx, json, { ok: true, policy: out, serial }, () => shown`wrote ${out} (serial ${serial}); sign it with airlock trust sign, then airlock trust rotate`);
        return 0;
      }
      case 'sign': {
        if (positionals.length !== 1) throw new UsageError('trust sign takes exactly one POLICY.json', { subject: 'POLICY' });
        const out = resolve(ctx.cwd, requireString(values.out, '--out'));
        await checkOutFile(out, { flag: '--out', force: false });
        const keyFile = requireString(values.key?.[0], '--key');
        const key = await loadPrivateKey(resolve(ctx.cwd, keyFile), { shown: keyFile, flag: '--key' });
        const bytes = await readUserFile(ctx, positionals[0]!, POLICY_BOUNDS.maxBytes);
        await writeFile(out, sign(null, bytes, key), { flag: 'wx' }).catch(cannotWrite(out));
        printResult(ctx, json, { ok: true, signature: out, signer: fingerprint(key) }, () => shown`wrote ${out} (signed by ${fingerprint(key)})`);
        return 0;
      }
      case 'rotate': {
        const given = requireString(values.policy, '--policy');
        const bytes = await readPolicyDocument(ctx, given);
        const sigs = await Promise.all((values.sig ?? []).map(async (p) => {
          const sig = await readUserFile(ctx, p, MAX_SIG_FILE);
          // Counted silently as no signature, a damaged file would only surface as a threshold refusal.
          if (sig.length !== 64) throw new UsageError(`${escapeControls(p)} is ${sig.length} bytes, not a raw 64-byte Ed25519 signature (airlock trust sign writes one); sign the policy again`, { subject: p }, 'AIRLOCK_BAD_SIGNATURE');
          return sig;
        }));
        const r = await rotatePolicy(store(), readNewPolicy(bytes, sigs, given));
        printResult(ctx, json, { ok: true, store: store(), ...r }, () => shown`trust policy ${r.previous} -> ${r.serial}, signed by ${r.signers.join(', ')}`);
        return 0;
      }
      case 'show': {
        const s = store();
        // The chain is verified from its root: a broken one is exit 4 with its code, naming the file.
        const c = await loadPolicyChain(s);
        if (!c) {
          printResult(ctx, json, { ok: true, store: s, policy: null }, () => shown`store ${s} has no trust policy: imports need one key of --trust or ${s}/trusted-keys/*.pub`);
          return 0;
        }
        const p = c.current;
        const chain = { serials: c.serials, ok: true, problem: null };
        const seen = await readSeen(s);
        const now = Date.now();
        const keys = p.keys.map((k) => ({ name: k.name, fingerprint: k.fingerprint, expiresAt: k.expiresAt, live: k.expiresAt === null || Date.parse(k.expiresAt) > now }));
        printResult(ctx, json, { ok: true, store: s, serial: p.policy.serial, createdAt: p.policy.createdAt, identity: p.policy.identity, threshold: p.policy.threshold, keys, chain, seen: seen.domains }, () => [
          shown`policy ${p.policy.serial} (${p.policy.createdAt})${p.policy.identity ? shown`, store identity ${p.policy.identity}` : ''}`,
          shown`threshold ${p.policy.threshold.default}` + Object.entries(p.policy.threshold.domains).map(([d, n]) => shown`, ${d}: ${n}`).join(''),
          ...keys.map((k) => shown`key ${k.name} ${k.fingerprint}` + (k.expiresAt ? shown` expires ${k.expiresAt}` : '') + (k.live ? '' : ' (EXPIRED: does not count)')),
          `chain ${chain.serials.join(' -> ')}: every rotation signed by its predecessor's threshold, policy.json its last entry`,
          ...Object.entries(seen.domains).map(([d, v]) => shown`seen ${d}: sequence ${v.sequence} (${v.version})`),
        ].join('\n'));
        return 0;
      }
      default:
        throw new UsageError(`trust takes init, draft, sign, rotate or show, got ${JSON.stringify(sub ?? '')}`, { subject: 'trust' });
    }
  },
};
export default command;
