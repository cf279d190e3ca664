import { prune, resolveStore } from '../store/index.js';
import { parse, parseIntFlag } from './args.js';
import { printResult } from './context.js';
import type { Command } from './main.js';
import { UsageError } from '../errors.js';

const USAGE = `usage: airlock prune --keep N [--store DIR] [--json]

Delete all but the N most recently imported versions. Never deletes the active version, the
previous one (the target of rollback), or a version a running server holds a lease on.`;

const command: Command = {
  summary: 'delete old versions (never the active, previous or a served one)',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { keep: { type: 'string' }, store: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const keep = parseIntFlag(values.keep, '--keep', 0, 1_000_000);
    if (keep === undefined) throw new UsageError('missing required --keep N', { subject: '--keep' });
    const store = resolveStore(values.store, ctx.env, ctx.cwd);
    const deleted = await prune(store, keep);
    printResult(ctx, Boolean(values.json), { ok: true, store, deleted }, () =>
      deleted.length ? `deleted: ${deleted.join(', ')}` : 'nothing to delete');
    return 0;
  },
};
export default command;
