import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { readPackage, type PackageLayout } from '../package/reader.js';
import { parse } from './args.js';
import { printResult } from './context.js';
import type { Command } from './main.js';

const USAGE = `usage: airlock inspect PKG [--json]

Print the manifest of a .airlock package, reading only its head: nothing is extracted and the
signature and digests are NOT checked (use airlock verify for that).`;

/** Prose summary of a package (pure). */
export function describe(path: string, l: PackageLayout): string {
  const m = l.manifest;
  const bytes = m.files.reduce((n, f) => n + f.size, 0);
  return [
    `package    ${path}`,
    `domain     ${m.domain}`,
    `version    ${m.version}`,
    `job        ${m.jobId ?? '-'}`,
    `created    ${m.createdAt}`,
    `pages      ${m.pageCount ?? '?'}`,
    `archive    ${m.archive.name} (${m.archive.format}, ${m.archive.size} bytes, sha256 ${m.archive.sha256})`,
    `files      ${m.files.length} (${bytes} bytes)`,
    `signature  ${l.signature ? 'present (not checked; run airlock verify)' : 'none'}`,
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
      { ok: true, path, signature: layout.signature ? 'present' : 'none', archive: layout.archive, manifest: layout.manifest },
      () => describe(path, layout));
    return 0;
  },
};
export default command;
