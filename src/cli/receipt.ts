import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { requireStore } from '../store/location.js';
import { STORE_FLAGS, STORE_HELP, storeFromFlags } from './store-flag.js';
import { makeReceipt } from '../store/receipt.js';
import { shown } from '../util/terminal.js';
import { parse, requireString } from './args.js';
import { printResult, type Command } from './context.js';
import { stopOrFinish } from './stop-or-finish.js';
import { checkOutFile, writeOutFile } from './out-file.js';

const USAGE = `usage: airlock receipt [--store DIR | --library LIB [--site DOMAIN]] --out FILE [--force] [--json]

On the receiving side: write what the store holds (format airlock-receipt/1: each version's
label, domain, import time and manifest sha256, and the active version) to FILE, a small
unsigned JSON file that travels back to the connected side, where it tells which version (by
manifest digest) the next \`airlock delta\` must use as OLD. It holds no secret.
${STORE_HELP}
  --out FILE    where to write the receipt: a new file outside the store (written atomically)
  --force       replace FILE if it is an existing regular file (never a folder, device, FIFO,
                symbolic link, or anything inside the store)
  --json        print the receipt on stdout too

Exit codes: 0 ok, 1 failure, 2 usage, no such store, or FILE refused (exists, not a regular file,
inside the store).`;

const command: Command = {
  summary: 'write what the store holds, for the connected side to pick a delta base',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { ...STORE_FLAGS, out: { type: 'string' }, force: { type: 'boolean' }, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const out = resolve(ctx.cwd, requireString(values.out, '--out'));
    const store = await storeFromFlags(values, ctx);
    await requireStore(store);
    const rule = { flag: '--out', force: Boolean(values.force), hasForce: true, store };
    await checkOutFile(out, rule); // before reading the store: a refused FILE costs nothing
    const receipt = await stopOrFinish(ctx, 'receipt', shown`nothing was written to ${out}`, async () => {
      const r = await makeReceipt(store);
      await writeOutFile(out, JSON.stringify(r, null, 2) + '\n', rule);
      return r;
    });
    printResult(ctx, Boolean(values.json), receipt, () => shown`${out}` + `: ${receipt.versions.length} version(s)`);
    return 0;
  },
};
export default command;
