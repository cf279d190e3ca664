import { UsageError } from '../errors.js';
import { STORE_FLAGS, STORE_HELP, storeFromFlags } from './store-flag.js';
import { requireStore } from '../store/location.js';
import { verifyAudit } from '../store/audit.js';
import { readAuditTail } from '../store/audit.js';
import { numeric, parse } from './args.js';
import { printResult, type Command } from './context.js';
import { shown } from '../util/terminal.js';

const USAGE = `usage: airlock audit verify [--store DIR | --library LIB [--site DOMAIN]] [--json]
       airlock audit show   [--store DIR | --library LIB [--site DOMAIN]] [--last N] [--json]

The audit trail of every store (with or without a trust policy): STORE/audit.log holds one JSON line per event
(time, OS user, command, package sha256, domain, version, signers' fingerprints, outcome, reason
code), each carrying the sha256 of the line before; STORE/audit.head holds the count, the last
hash and the length. verify re-checks the whole chain: a deleted, inserted, moved or edited line,
a cut tail, a line longer than 64 KiB or a log that is not a regular file is a break (exit 4), and
every command that writes to the store refuses while it lasts. show lists what it can read (a line
it cannot, as unreadable). Keep the last hash verify prints somewhere else too: someone who can
rewrite both files can rewrite history, and only a copy held elsewhere shows that.

${STORE_HELP}
  --last N           show only the last N lines (default 50)
  --json             one JSON document on stdout

Exit codes: 0 ok, 1 failure, 2 usage, 4 the chain is broken.`;

const command: Command = {
  summary: "verify or show the store's hash-chained audit log",
  usage: USAGE,
  async run(argv, ctx) {
    const [sub, ...rest] = argv;
    const { values, positionals, numbers } = parse(rest, { ...STORE_FLAGS, json: { type: 'boolean' }, last: numeric({ min: 1, max: 1_000_000 }) });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const store = await storeFromFlags(values, ctx);
    await requireStore(store); // a mistyped --store is no store, not a clean log of 0 lines
    const json = Boolean(values.json);
    if (sub === 'verify') {
      const r = await verifyAudit(store);
      printResult(
        ctx,
        json,
        { ok: r.ok, store, lines: r.lines, lastHash: r.lastHash, problem: r.problem, pending: r.pending, ...(r.ok ? {} : { code: 'AIRLOCK_AUDIT_BROKEN' }) },
        () =>
          r.ok
            ? `audit log OK: ${r.lines} lines, last hash ${r.lastHash}` +
              (r.pending ? ' (the last line was written by a command that crashed before acknowledging it)' : '')
            : shown`audit log BROKEN${r.lines ? ` after line ${r.lines}` : ''}: ${r.problem ?? ''} [AIRLOCK_AUDIT_BROKEN]`,
      );
      return r.ok ? 0 : 4;
    }
    if (sub === 'show') {
      const { lines, earlierUnread } = await readAuditTail(store, numbers.last ?? 50);
      printResult(
        ctx,
        json,
        { ok: true, store, lines, ...(earlierUnread ? { earlierUnread } : {}) },
        () =>
          (earlierUnread ? '(older lines were not read; audit verify reads the whole log)\n' : '') +
            lines
              .map(
                (l) =>
                  shown`${l.n} ${l.time} ${l.user} ${l.command} ${l.outcome}` +
                  (l.reason ? shown` [${l.reason}]` : '') +
                  (l.domain ? shown` ${l.domain}` : '') +
                  (l.version ? shown` ${l.version}` : '') +
                  (l.signers.length ? shown` signers ${l.signers.join(',')}` : '') +
                  (l.detail ? shown`: ${l.detail}` : ''),
              )
              .join('\n') || 'no audit lines',
      );
      return 0;
    }
    throw new UsageError(`audit takes verify or show, got ${JSON.stringify(sub ?? '')}`, { subject: 'audit' });
  },
};
export default command;
