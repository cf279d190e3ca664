import { stat } from 'node:fs/promises';
import { dirname, join, resolve, sep } from 'node:path';
import { AirlockError, EXIT, UsageError } from '../errors.js';
import { generateKeyPair } from '../package/keys.js';
import { describeFsError } from '../util/fsx.js';
import { parse, requireString } from './args.js';
import { refuseInStore } from './out-file.js';
import { printResult, type Command } from './context.js';
import { stopOrFinish } from './stop-or-finish.js';

const USAGE = `usage: airlock keygen --out PREFIX [--json]

Write an Ed25519 key pair: PREFIX.key (PKCS#8 PEM, mode 0600; keep it on the connected side) and
PREFIX.pub (SPKI PEM; give it to importers as --trust or put it in the store's trusted-keys/).
Never overwrites an existing file: exit 2 (AIRLOCK_EXISTS), like every output of every command;
choose another --out. The folder of PREFIX must exist.

  --out PREFIX   where to write (e.g. keys/signer → keys/signer.key, keys/signer.pub)
  --json         print one JSON document on stdout (keyPath, pubPath, fingerprint)

Exit codes: 0 ok, 1 failure (e.g. the folder is not writable), 2 usage (missing --out, missing
folder, a key already there).`;

/**
 * The prefix names files in an existing folder. A missing folder is not created (a typo should not
 * make folders; ssh-keygen does not either), and a folder given as the prefix is refused rather
 * than turned into FOLDER.key beside it. Exit 2, naming the path.
 */
async function checkPrefix(raw: string, prefix: string): Promise<void> {
  const example = `e.g. --out ${join(raw, 'signer')} writes ${join(raw, 'signer')}.key and .pub`;
  if (raw.endsWith('/') || raw.endsWith(sep)) throw new UsageError(`--out ${raw} names a folder; give a file prefix (${example})`, { subject: '--out' });
  const self = await stat(prefix).catch(() => null);
  if (self?.isDirectory()) throw new UsageError(`--out ${raw} is a folder; give a file prefix (${example})`, { subject: '--out' });
  const dir = dirname(prefix);
  const parent = await stat(dir).catch(() => null);
  if (parent === null) throw new UsageError(`folder ${dir} does not exist; create it first (mkdir -p ${dir}) or choose another --out`, { subject: '--out' });
  if (!parent.isDirectory()) throw new UsageError(`${dir} is not a folder; choose another --out`, { subject: '--out' });
}

const command: Command = {
  summary: 'write an Ed25519 key pair for signing packages',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { out: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const out = requireString(values.out, '--out');
    const prefix = resolve(ctx.cwd, out);
    await checkPrefix(out, prefix);
    await refuseInStore(prefix, '--out', 'file');
    const r = await stopOrFinish(ctx, 'keygen', 'no key was written', () => generateKeyPair(prefix)).catch((err: NodeJS.ErrnoException) => {
      if (err instanceof AirlockError || typeof err?.code !== 'string') throw err;
      throw new AirlockError('AIRLOCK_KEY_WRITE', `cannot write the key pair ${prefix}.key/.pub: ${describeFsError(err, 'write')}`, EXIT.FAILURE, {
        subject: err.path ?? prefix,
      });
    });
    printResult(
      ctx,
      Boolean(values.json),
      { ok: true, ...r },
      () => `wrote ${r.keyPath} (private key, mode 0600)\nwrote ${r.pubPath} (public key)\nfingerprint ${r.fingerprint}`,
    );
    return 0;
  },
};
export default command;
