import { listVersions, readState, resolveStore, type VersionInfo } from '../store/index.js';
import { parse } from './args.js';
import { printResult } from './context.js';
import type { Command } from './main.js';
import { UsageError } from '../errors.js';

const USAGE = `usage: airlock list [--store DIR] [--json]

The store's versions, newest import first. Marks: * active, - previous (the target of rollback).`;

/** One aligned table (pure). */
export function formatTable(versions: VersionInfo[]): string {
  if (versions.length === 0) return 'no versions in the store';
  const rows = versions.map((v) => [
    v.active ? '*' : v.previous ? '-' : ' ',
    v.version, v.domain, v.pageCount === null ? '?' : String(v.pageCount), String(v.fileCount),
    `${(v.totalBytes / 1048576).toFixed(1)} MB`, v.importedAt,
  ]);
  const head = [' ', 'VERSION', 'DOMAIN', 'PAGES', 'FILES', 'SIZE', 'IMPORTED'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  return [head, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join('  ').trimEnd()).join('\n');
}

const command: Command = {
  summary: 'list the versions in the store (active and previous marked)',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { store: { type: 'string' }, json: { type: 'boolean' } });
    if (positionals.length) throw new UsageError(`unexpected argument ${JSON.stringify(positionals[0])}`, { subject: positionals[0] });
    const store = resolveStore(values.store, ctx.env, ctx.cwd);
    const [versions, state] = await Promise.all([listVersions(store), readState(store)]);
    printResult(ctx, Boolean(values.json), { store, active: state.active, previous: state.previous, versions }, () => formatTable(versions));
    return 0;
  },
};
export default command;
