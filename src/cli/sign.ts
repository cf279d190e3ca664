import { UsageError } from '../errors.js';
import { addSignature } from '../package/sign.js';
import { loadPrivateKey } from '../package/keys.js';
import { addDeltaSignature, isDeltaPackage } from '../delta/index.js';
import { resolve } from 'node:path';
import { parse, requireString } from './args.js';
import { printResult, type Command } from './context.js';
import { stopOrFinish } from './stop-or-finish.js';
import { shown } from '../util/terminal.js';

const USAGE = `usage: airlock sign PKG --key KEYFILE [--full FULL.airlock] [--json]

Add a signature to an existing .airlock package (a second signer for a two-person rule, say):
a member airlock.json.sig.N holding the raw 64-byte Ed25519 signature of the exact bytes of
airlock.json. The manifest, the archive and every earlier signature are kept byte for byte; the
file is rewritten atomically. A key that already signed the package adds nothing. At most 32
signatures.

A delta package (airlock delta) is signed on its target manifest: a member target.json.sig.N,
the signature of the exact manifest of the full package airlock delta wrote beside it
(DIR/<domain>-<version>.full.airlock, or --full FILE; its sha256 must be the one the delta
names), so a store with a trust policy admits the delta as it would that full package. A delta
whose own manifest is unsigned gets this key's signature of it too.

  --key KEYFILE   the Ed25519 private key (airlock keygen's PREFIX.key)
  --full FILE     (delta only) the full target package, when it is not beside the delta
  --json          print one JSON document on stdout ({ok, package, added, signer, signatures})

Exit codes: 0 ok (also when this key had signed already), 1 failure, 2 usage, 4 the package is
malformed or already carries 32 signatures.`;

const command: Command = {
  summary: 'add a signature to a package (several signers)',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { key: { type: 'string' }, json: { type: 'boolean' }, full: { type: 'string' } });
    if (positionals.length !== 1) throw new UsageError('airlock sign takes exactly one package path', { subject: 'PKG' });
    const keyFile = requireString(values.key, '--key');
    const key = await loadPrivateKey(resolve(ctx.cwd, keyFile), { shown: keyFile, flag: '--key' });
    const pkg = resolve(ctx.cwd, positionals[0]!);
    if (await isDeltaPackage(pkg)) {
      const full = values.full === undefined ? undefined : resolve(ctx.cwd, values.full);
      const d = await stopOrFinish(ctx, 'sign', shown`${pkg} is as it was`, ({ signal }) => addDeltaSignature(pkg, key, { full, signal }));
      printResult(
        ctx,
        Boolean(values.json),
        {
          ok: true,
          package: d.path,
          kind: 'delta',
          added: d.added,
          signer: d.signer,
          signatures: d.signatures,
          envelopeSigned: d.envelopeSigned,
          full: d.full,
        },
        () =>
          (d.added
            ? shown`signed the target manifest of ${d.path} by ${d.signer}`
            : shown`the target manifest of ${d.path} is already signed by ${d.signer}; unchanged`) +
          ` (${d.signatures} target signature${d.signatures === 1 ? '' : 's'})` +
          (d.envelopeSigned ? '; the delta manifest was unsigned: signed it too' : ''),
      );
      return 0;
    }
    if (values.full !== undefined) throw new UsageError('--full applies to a delta package only', { subject: '--full' });
    const r = await stopOrFinish(ctx, 'sign', shown`${pkg} is as it was`, ({ signal }) => addSignature(pkg, key, { signal }));
    printResult(
      ctx,
      Boolean(values.json),
      { ok: true, package: r.path, added: r.added, signer: r.signer, signatures: r.signatures },
      () =>
        (r.added ? shown`signed ${r.path} by ${r.signer}` : shown`${r.path} is already signed by ${r.signer}; unchanged`) +
        ` (${r.signatures} signature${r.signatures === 1 ? '' : 's'})`,
    );
    return 0;
  },
};
export default command;
