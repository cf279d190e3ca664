import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { readPackage, type PackageLayout } from '../package/reader.js';
import { parse } from './args.js';
import { printResult } from './context.js';
import { shown } from '../util/terminal.js';
import { fmtBytes } from '../util/units.js';
import type { Command } from './main.js';

const USAGE = `usage: airlock inspect PKG [--json]

Print the manifest of a .airlock package, reading only its head: nothing is extracted and the
signature and digests are NOT checked (use airlock verify for that).

  --json   print one JSON document on stdout ({ok, package, signature, archive, manifest})

Exit codes: 0 ok, 1 failure, 2 usage, 4 not a readable package (malformed, or an export archive).`;

/** Prose summary of a package (pure). */
export function describe(path: string, l: PackageLayout): string {
  const m = l.manifest;
  const bytes = m.files.reduce((n, f) => n + f.size, 0);
  return [
    shown`package    ${path}`,
    shown`domain     ${m.domain}`,
    shown`version    ${m.version}`,
    shown`job        ${m.jobId ?? '-'}`,
    shown`created    ${m.createdAt}`,
    shown`pages      ${m.pageCount ?? '?'}`,
    shown`archive    ${m.archive.name} (${m.archive.format}, ${fmtBytes(m.archive.size)}, sha256 ${m.archive.sha256})`,
    shown`files      ${m.files.length} (${fmtBytes(bytes)})`,
    `signature  ${l.signatures.length > 1 ? `${l.signatures.length} present (not checked; run airlock verify)` : l.signature ? 'present (not checked; run airlock verify)' : 'none'}`,
    ...(m.sequence !== undefined ? [shown`sequence   ${m.sequence}`] : []),
    ...(m.expiresAt !== undefined ? [shown`expires    ${m.expiresAt}`] : []),
    ...(m.audience !== undefined ? [shown`audience   ${m.audience}`] : []),
  ].join('\n');
}

const command: Command = {
  summary: 'print the manifest of a package without extracting anything',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('airlock inspect takes exactly one package path', { subject: 'PKG' });
    const path = resolve(ctx.cwd, positionals[0]!);
    const layout = await readPackage(path);
    printResult(ctx, Boolean(values.json),
      { ok: true, package: path, signature: layout.signature ? 'present' : 'none', signatures: layout.signatures.length, archive: layout.archive, manifest: layout.manifest },
      () => describe(path, layout));
    return 0;
  },
};
export default command;
