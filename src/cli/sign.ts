import { UsageError } from '../errors.js';
import { addSignature, loadPrivateKey } from '../package/index.js';
import { resolve } from 'node:path';
import { parse, requireString } from './args.js';
import { printResult } from './context.js';
import { shown } from '../util/terminal.js';
import type { Command } from './main.js';

const USAGE = `usage: airlock sign PKG --key KEYFILE [--json]

Add a signature to an existing .airlock package (a second signer for a two-person rule, say):
a member airlock.json.sig.N holding the raw 64-byte Ed25519 signature of the exact bytes of
airlock.json. The manifest, the archive and every earlier signature are kept byte for byte; the
file is rewritten atomically. A key that already signed the package adds nothing. At most 32
signatures.

  --key KEYFILE   the Ed25519 private key (airlock keygen's PREFIX.key)
  --json          print one JSON document on stdout ({ok, package, added, signer, signatures})

Exit codes: 0 ok (also when this key had signed already), 1 failure, 2 usage, 4 the package is
malformed or already carries 32 signatures.`;

const command: Command = {
  summary: 'add a signature to a package (several signers, issue 14)',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { key: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('airlock sign takes exactly one package path', { subject: 'PKG' });
    const key = await loadPrivateKey(resolve(ctx.cwd, requireString(values.key, '--key')));
    const r = await addSignature(resolve(ctx.cwd, positionals[0]!), key);
    printResult(ctx, Boolean(values.json), { ok: true, package: r.path, added: r.added, signer: r.signer, signatures: r.signatures },
      () => (r.added ? shown`signed ${r.path} by ${r.signer}` : shown`${r.path} is already signed by ${r.signer}; unchanged`) + ` (${r.signatures} signature${r.signatures === 1 ? '' : 's'})`);
    return 0;
  },
};
export default command;
