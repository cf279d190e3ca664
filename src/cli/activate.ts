import { activate } from '../store/activate.js';
import { checkSiteVersion } from '../store/library.js';
import { STORE_FLAGS, STORE_HELP, storeFromFlags } from './store-flag.js';
import { checkVersionLabel, parse } from './args.js';
import { printResult, type Command } from './context.js';
import { stopOrFinish } from './stop-or-finish.js';
import { switchHelp } from './switch-help.js';
import { UsageError } from '../errors.js';

const command: Command = {
  summary: 'make a version the active one (running servers switch without restart)',
  usage: `usage: airlock activate V [--store DIR | --library LIB [--site DOMAIN]] [--json]

Make version V the active one. Atomic and durable: once this returns, V stays active across a
crash; running unpinned servers switch to it within 1 s.

${STORE_HELP}

${switchHelp('no such version')}`,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { ...STORE_FLAGS, json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('activate takes exactly one version label', { subject: 'V' });
    const label = checkVersionLabel(positionals[0]!, 'version label');
    const store = await storeFromFlags(values, ctx);
    if (values.library !== undefined) await checkSiteVersion(store, label);
    await stopOrFinish(ctx, 'activate', 'nothing was changed: the active version is as it was', (lock) => activate(store, label, lock));
    printResult(ctx, Boolean(values.json), { ok: true, store, active: label }, () => `active: ${label}`);
    return 0;
  },
};
export default command;
