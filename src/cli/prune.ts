import { pruneReport, type KeepReason } from '../store/prune.js';
import { STORE_FLAGS, STORE_HELP, storeFromFlags } from './store-flag.js';
import { numeric, parse } from './args.js';
import { log, printResult, type Command } from './context.js';
import { shown } from '../util/terminal.js';
import { AirlockError, UsageError } from '../errors.js';
import { interruptedError, trapFor } from './interrupt.js';
import { finishedAfter } from './stop-or-finish.js';

const USAGE = `usage: airlock prune --keep N [--store DIR | --library LIB [--site DOMAIN]] [--json]

Delete all but the N most recently imported versions. Never deletes the active version, the
previous one (the target of rollback), or a version a running server holds a lease on.
Prints every version with what happened to it and why it was kept.

  --keep N      how many of the most recent versions to keep (0 or more)
${STORE_HELP}
  --json        print one JSON document on stdout ({ok, store, deleted, versions: [{version,
                deleted, reasons: [{why: newest|active|previous|leased, keep?, pids?}]}]})

A store that does not exist is an error (exit 2); nothing is created.
Exit codes: 0 ok, 1 failure, 2 usage or no such store, 4 the audit log does not verify
(AIRLOCK_AUDIT_BROKEN: nothing was deleted; see airlock audit verify).`;

/** One reason in words (pure). */
export function reasonText(r: KeepReason): string {
  switch (r.why) {
    case 'newest':
      return `among the ${r.keep} newest (--keep ${r.keep})`;
    case 'active':
      return 'active';
    case 'previous':
      return 'previous (the target of rollback)';
    case 'leased':
      return `served by a running server (pid ${r.pids.join(', ')})`;
  }
}

const command: Command = {
  summary: 'delete old versions (never the active, previous or a served one)',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals, numbers } = parse(argv, { keep: numeric({ min: 0, max: 1_000_000 }), ...STORE_FLAGS, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const keep = numbers.keep;
    if (keep === undefined) throw new UsageError('missing required --keep N', { subject: '--keep' });
    const store = await storeFromFlags(values, ctx);
    const trap = trapFor(ctx);
    const onWait = (pid: number) => log(ctx, `airlock prune: waiting for the store lock held by process ${pid}`);
    const report = await pruneReport(store, keep, { signal: trap.signal, onWait }).catch((err: unknown) => {
      throw trap.signal.aborted ? interruptedError(trap, err instanceof AirlockError ? err.message : 'nothing was deleted', err) : err;
    });
    printResult(ctx, Boolean(values.json), { ok: true, store, ...report }, () => {
      if (report.versions.length === 0) return 'no versions in the store';
      const lines = report.versions.map((v) =>
        v.deleted ? shown`deleted ${v.version}` : shown`kept    ${v.version}: ` + v.reasons.map(reasonText).join('; '),
      );
      return [...lines, report.deleted.length ? `${report.deleted.length} deleted` : 'nothing to delete'].join('\n');
    });
    finishedAfter(ctx, 'prune', trap); // the signal came while the last version went: it is gone whole
    return 0;
  },
};
export default command;
