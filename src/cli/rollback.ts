import { STORE_FLAGS, STORE_HELP, storeFromFlags } from './store-flag.js';
import { rollback } from '../store/activate.js';
import { parse } from './args.js';
import { printResult, type Command } from './context.js';
import { stopOrFinish } from './stop-or-finish.js';
import { switchHelp } from './switch-help.js';
import { UsageError } from '../errors.js';

const command: Command = {
  summary: 're-activate the previously active version',
  usage: `usage: airlock rollback [--store DIR | --library LIB [--site DOMAIN]] [--json]

Swap the active and the previous version (so a second rollback undoes the first).
${STORE_HELP}

${switchHelp('no previous version')}`,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { ...STORE_FLAGS, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const store = await storeFromFlags(values, ctx);
    const label = await stopOrFinish(ctx, 'rollback', 'nothing was changed: the active version is as it was', (lock) => rollback(store, lock));
    printResult(ctx, Boolean(values.json), { ok: true, store, active: label }, () => `active: ${label}`);
    return 0;
  },
};
export default command;
