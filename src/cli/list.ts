import { listVersions, type VersionInfo } from '../store/list.js';
import { readState } from '../store/state.js';
import { requireStore } from '../store/location.js';
import { STORE_FLAGS, STORE_HELP, storeFromFlags } from './store-flag.js';
import { parse } from './args.js';
import { printResult, type Command } from './context.js';
import { escapeControls } from '../util/terminal.js';
import { fmtBytes } from '../util/units.js';
import { UsageError } from '../errors.js';

const USAGE = `usage: airlock list [--store DIR | --library LIB [--site DOMAIN]] [--json]

The store's versions, newest import first. Marks: * active, - previous (the target of rollback).
SERVED BY lists the pids of running servers holding a lease on a version (prune keeps it).
ASSETS says whether its text assets are precompressed yet (br, gzip) or still pending: a running
server builds them in the background and serves them uncompressed until then.

${STORE_HELP}
  --json        print one JSON document on stdout ({ok, store, active, previous, versions})

A store that does not exist is an error (exit 2); nothing is created.
Exit codes: 0 ok, 1 failure, 2 usage or no such store.`;

const UNKNOWN_PAGES =
  "? PAGES: the page count is unknown: the version's airlock.json cannot be read (damaged or edited by hand); check the version's package with airlock verify";

/** One aligned table (pure), with a footnote when a page count is unknown. */
export function formatTable(versions: VersionInfo[]): string {
  if (versions.length === 0) return 'no versions in the store';
  const rows = versions.map((v) => [
    v.active ? '*' : v.previous ? '-' : ' ',
    escapeControls(v.version),
    escapeControls(v.domain),
    v.pageCount === null ? '?' : String(v.pageCount),
    String(v.fileCount),
    fmtBytes(v.totalBytes),
    v.precompressed ? 'br,gzip' : 'pending',
    escapeControls(v.importedAt),
    v.servedBy.length ? `pid ${v.servedBy.join(', ')}` : '',
  ]);
  const head = [' ', 'VERSION', 'DOMAIN', 'PAGES', 'FILES', 'SIZE', 'ASSETS', 'IMPORTED', 'SERVED BY'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const table = [head, ...rows].map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
  // The count comes from the manifest's file list: only a manifest that cannot be read leaves it unknown.
  if (versions.some((v) => v.pageCount === null)) table.push('', UNKNOWN_PAGES);
  return table.join('\n');
}

const command: Command = {
  summary: 'list the versions in the store (active and previous marked)',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { ...STORE_FLAGS, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const store = await storeFromFlags(values, ctx);
    await requireStore(store);
    const [versions, state] = await Promise.all([listVersions(store), readState(store)]);
    printResult(ctx, Boolean(values.json), { ok: true, store, active: state.active, previous: state.previous, versions }, () => formatTable(versions));
    return 0;
  },
};
export default command;
