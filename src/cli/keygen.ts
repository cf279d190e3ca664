import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { generateKeyPair } from '../package/keys.js';
import { parse, requireString } from './args.js';
import { printResult } from './context.js';
import type { Command } from './main.js';

const USAGE = `usage: airlock keygen --out PREFIX

Write an Ed25519 key pair: PREFIX.key (PKCS#8 PEM, mode 0600; keep it on the connected side) and
PREFIX.pub (SPKI PEM; give it to importers as --trust or put it in the store's trusted-keys/).
Never overwrites an existing file.`;

const command: Command = {
  summary: 'write an Ed25519 key pair for signing packages',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { out: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const prefix = resolve(ctx.cwd, requireString(values.out, '--out'));
    const r = await generateKeyPair(prefix);
    printResult(ctx, Boolean(values.json), { ok: true, ...r }, () =>
      `wrote ${r.keyPath} (private key, mode 0600)\nwrote ${r.pubPath} (public key)\nfingerprint ${r.fingerprint}`);
    return 0;
  },
};
export default command;
