import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { loadPublicKey } from '../package/keys.js';
import { verifyAsImport } from '../store/verify-decision.js';
import { storeFromFlags } from './store-flag.js';
import { parse } from './args.js';
import { log, printResult, type Command } from './context.js';
import { shown } from '../util/terminal.js';
import { packageArgs, VOLUMES_HELP } from './volumes.js';
import { openVolumes } from '../package/volumes/index.js';

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
                     of the policy), its base in the store, the target's order, expiry and
                     audience; its target signatures are counted at import, once rebuilt
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
      trust: { type: 'string', multiple: true },
      'allow-unsigned': { type: 'boolean' },
      json: { type: 'boolean' },
      volumes: { type: 'string', multiple: true },
      store: { type: 'string' },
      'allow-downgrade': { type: 'boolean' },
    });
    const args = await packageArgs(positionals, values.volumes, ctx.cwd);
    if (args.kind === 'file' && positionals.length !== 1) throw new UsageError('airlock verify takes exactly one package path', { subject: 'PKG' });
    const trust = await Promise.all((values.trust ?? []).map((p) => loadPublicKey(resolve(ctx.cwd, p))));
    const allowUnsigned = Boolean(values['allow-unsigned']);
    const set =
      args.kind === 'volumes'
        ? await openVolumes(args.paths, {
            dirs: args.dirs,
            trust,
            allowUnsigned,
            onVolume: (i, n, p) => {
              if (!values.json) log(ctx, shown`volume ${i}/${n} ok: ${p}`);
            },
          })
        : null;
    const path = set ? set.input.path : (args as { path: string }).path;
    if (!values.json) log(ctx, shown`verifying ${path}`);
    const volumes = set ? { count: set.paths.length, paths: set.paths } : null;
    const input = set ? set.input : path;
    // As import would: a library's folder is no store (refused before the package is verified).
    const store = values.store === undefined ? null : await storeFromFlags({ store: values.store }, ctx);
    const report = await verifyAsImport(input, {
      path,
      volumes,
      trust,
      allowUnsigned,
      allowDowngrade: Boolean(values['allow-downgrade']),
      store: store === null ? null : () => store,
    });
    printResult(ctx, Boolean(values.json), report.json, report.text);
    return 0;
  },
};
export default command;
