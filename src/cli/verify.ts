import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { loadPublicKey } from '../package/keys.js';
import { verifyPackage } from '../package/verify.js';
import type { PackageLayout } from '../package/reader.js';
import { admitPackage, type Admission } from '../store/admit.js';
import { checkDeltaEnvelope } from '../store/delta-import.js';
import { resolveStore } from '../store/paths.js';
import { parse } from './args.js';
import { log, printResult, type Command } from './context.js';
import { shown } from '../util/terminal.js';
import { fmtBytes } from '../util/units.js';
import { packageArgs, VOLUMES_HELP } from './volumes.js';
import { openVolumes } from '../package/volumes/index.js';
import { isDeltaPackage, verifyDelta, type DeltaLayout } from '../delta/index.js';

const USAGE = `usage: airlock verify PKG... [--volumes DIR,...] [--trust PUBFILE]... [--allow-unsigned] [--store DIR [--allow-downgrade]] [--json]

Check a .airlock package without extracting anything: its structure, the signature against the
trusted keys, the archive's sha256, every archive safety rule, and every file's sha256. For a
delta package: its structure, signature and payload sha256, and the base it needs (label and
manifest sha256); its rebuilt files are checked at import, where the base is.
Exit 0 when all hold; 4 naming the first failure otherwise.

Trust policy (the same as import): an unsigned package passes only with --allow-unsigned; a
signature that none of the --trust keys verifies fails (exit 4) even with --allow-unsigned, since
an unknown key proves nothing and may be an attacker's re-signing.

  --trust PUBFILE    trust this Ed25519 public key (repeatable)
  --allow-unsigned   accept a package without a signature
${VOLUMES_HELP}
  --store DIR        decide as \`airlock import --store DIR\` would: the store's trust policy (signers
                     counted against its threshold), no downgrade, expiry, audience; writes nothing.
                     For a delta: its own manifest's signature under the store's rule (a live key
                     of the policy); its target signatures are counted at import, once rebuilt
  --allow-downgrade  with --store: as import --allow-downgrade would
  --json             print one JSON document on stdout ({ok, package, domain, version, signed, signer, signers, files, bytes, archive, volumes})

Volumes are read in place (read-only media are fine), never joined or removed; each is checked
against the signed volume table first, and a missing, duplicated, truncated, reordered, foreign or
damaged volume is named (exit 4): copy just that one again.

Exit codes: 0 ok, 1 failure, 2 usage (e.g. a missing --trust file), 4 verification failed.`;

const command: Command = {
  summary: 'check signature, digests and archive safety of a package; extracts nothing',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, {
      trust: { type: 'string', multiple: true }, 'allow-unsigned': { type: 'boolean' }, json: { type: 'boolean' },
      volumes: { type: 'string', multiple: true }, store: { type: 'string' }, 'allow-downgrade': { type: 'boolean' },
    });
    const args = await packageArgs(positionals, values.volumes, ctx.cwd);
    if (args.kind === 'file' && positionals.length !== 1) throw new UsageError('airlock verify takes exactly one package path', { subject: 'PKG' });
    const trust = await Promise.all((values.trust ?? []).map((p) => loadPublicKey(resolve(ctx.cwd, p))));
    const allowUnsigned = Boolean(values['allow-unsigned']);
    const set = args.kind === 'volumes'
      ? await openVolumes(args.paths, { dirs: args.dirs, trust, allowUnsigned, onVolume: (i, n, p) => { if (!values.json) log(ctx, shown`volume ${i}/${n} ok: ${p}`); } })
      : null;
    const path = set ? set.input.path : (args as { path: string }).path;
    if (!values.json) log(ctx, shown`verifying ${path}`);
    const volumes = set ? { count: set.paths.length, paths: set.paths } : null;
    const input = set ? set.input : path;
    if (await isDeltaPackage(input)) {
      // --store: the delta manifest's signature under the store's rule (a policy's live keys), as import checks it first.
      const deltaStore = values.store === undefined ? null : resolveStore(values.store, ctx.env, ctx.cwd);
      let env: Awaited<ReturnType<typeof checkDeltaEnvelope>> | null = null;
      const d = await verifyDelta(input, { trust, allowUnsigned, ...(deltaStore ? { decide: async (l: DeltaLayout) => (env = await checkDeltaEnvelope(deltaStore, l, { trust, allowUnsigned })) } : {}) });
      const m = d.manifest;
      const e = env as Awaited<ReturnType<typeof checkDeltaEnvelope>> | null;
      printResult(ctx, Boolean(values.json),
        { ok: true, package: path, kind: 'delta', domain: m.domain, version: m.version, base: m.base, target: m.target, signed: d.signed, signer: d.signer, targetSignatures: d.targetSignatures, payload: m.payload,
          ...(e ? { store: deltaStore, decision: { rule: e.rule, policySerial: e.policySerial, target: 'checked at import, once the target is rebuilt from the base' } } : {}), volumes },
        () => shown`OK delta of ${m.domain} ${m.base.version} → ${m.version}: ` + (d.signed ? shown`signed by ${d.signer}` : 'UNSIGNED (accepted with --allow-unsigned)') +
          shown`; base ${m.base.version} manifest sha256 ${m.base.manifestSha256}; payload sha256 matches; ${d.targetSignatures} target signature(s)` +
          '\n  import needs that exact base in the store; the rebuilt version is checked file by file against the signed target manifest there' +
          (e ? shown`\nstore ${deltaStore}: its ${e.rule === 'policy' ? `trust policy ${e.policySerial}` : 'trusted keys'} accept the delta's own manifest; import admits the rebuilt target with its signatures as it would the full package (threshold, freshness)` : ''));
      return 0;
    }
    // --store: the store's decision, exactly as import would take it (policy, thresholds, freshness); nothing is written.
    const store = values.store === undefined ? null : resolveStore(values.store, ctx.env, ctx.cwd);
    let admission: Admission | null = null;
    const decide = store === null ? undefined : async (layout: PackageLayout) => {
      admission = await admitPackage(store, layout, { trust, allowUnsigned, allowDowngrade: Boolean(values['allow-downgrade']) });
      return { signed: admission.signers.length > 0, signer: admission.signers[0] ?? null, signers: admission.signers };
    };
    const r = await verifyPackage(input, { trust, allowUnsigned, decide });
    const a = admission as Admission | null;
    const m = r.manifest;
    printResult(ctx, Boolean(values.json),
      { ok: true, package: path, domain: m.domain, version: m.version, signed: r.signed, signer: r.signer, signers: r.signers, files: r.files, bytes: r.bytes, archive: m.archive,
        ...(m.sequence !== undefined ? { sequence: m.sequence } : {}), ...(m.expiresAt ? { expiresAt: m.expiresAt } : {}), ...(m.audience ? { audience: m.audience } : {}),
        ...(m.vendor ? { vendored: m.vendor.length } : {}),
        ...(a ? { store, decision: { rule: a.rule, policySerial: a.policySerial, need: a.need, signerNames: a.signerNames, overridden: a.overridden } } : {}), volumes },
      () => shown`OK ${m.domain} ${m.version}: ` + (r.signed ? shown`signed by ${r.signer}` : 'UNSIGNED (accepted with --allow-unsigned)') +
        shown`; ${m.archive.name} sha256 ${m.archive.sha256}; ${r.files} files, ${fmtBytes(r.bytes)} match the manifest` +
        (m.vendor ? `; ${m.vendor.length} vendored third-party files match too` : '') +
        (volumes ? `; read in place from ${volumes.count} volumes` : '') +
        (a === null ? '' : a.rule === 'policy'
          ? shown`\nstore ${store}: import would accept it (trust policy ${a.policySerial}: ${r.signers.length} of ${a.need} signers: ${a.signerNames.join(', ')})` + (a.overridden.length ? shown`, overriding ${a.overridden.join(', ')}` : '')
          : shown`\nstore ${store}: import would accept it (no trust policy: one trusted key suffices)`));
    return 0;
  },
};
export default command;
