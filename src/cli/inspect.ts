import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { readPackage } from '../package/reader.js';
import { describePackage } from '../package/inspect-report.js';
import { isDeltaPackage, readDelta } from '../delta/index.js';
import { describeDelta } from '../delta/inspect-report.js';
import { describeVolume, isVolume, volumeName } from '../package/volumes/index.js';
import { parse } from './args.js';
import { printResult, type Command } from './context.js';
import { shown } from '../util/terminal.js';
import { fmtBytes } from '../util/units.js';

const USAGE = `usage: airlock inspect PKG [--json]

Print the manifest of a .airlock package, reading only its head: nothing is extracted and the
signature and digests are NOT checked (use airlock verify for that). For a delta package: the
base it needs (label and manifest sha256), the target, and what it changes. For a volume
(NAME.airlock.NNN): which of how many, and every volume's size and sha256 from its table.

  --json   print one JSON document on stdout ({ok, package, signature, archive, manifest})

Exit codes: 0 ok, 1 failure, 2 usage, 4 not a readable package (malformed, or an export archive).`;

const command: Command = {
  summary: 'print the manifest of a package without extracting anything',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals } = parse(argv, { json: { type: 'boolean' } });
    if (positionals.length !== 1) throw new UsageError('airlock inspect takes exactly one package path', { subject: 'PKG' });
    const path = resolve(ctx.cwd, positionals[0]!);
    if (await isVolume(path)) {
      const v = await describeVolume(path);
      printResult(
        ctx,
        Boolean(values.json),
        {
          ok: true,
          package: path,
          kind: 'volume',
          index: v.index,
          count: v.count,
          headerBytes: v.headerBytes,
          signature: v.signed ? 'present' : 'none',
          table: v.table,
        },
        () =>
          [
            shown`volume     ${path}: ${v.index} of ${v.count} of ${v.table.name} (${fmtBytes(v.table.packageSize)})`,
            shown`package id ${v.table.packageId} (sha256 of its airlock.json)`,
            `payloads   each volume's bytes after its ${v.headerBytes}-byte header (tail -c +${v.headerBytes + 1} FILE | sha256sum):`,
            ...v.table.volumes.map((e, i) => shown`  ${volumeName(v.table.name, i + 1)}  ${e.size} bytes, sha256 ${e.sha256}`),
            `signature  ${v.signed ? 'present (not checked; run airlock verify)' : 'none'}`,
          ].join('\n'),
      );
      return 0;
    }
    if (await isDeltaPackage(path)) {
      const d = await readDelta(path);
      printResult(
        ctx,
        Boolean(values.json),
        { ok: true, package: path, kind: 'delta', signature: d.signature ? 'present' : 'none', base: d.manifest.base, manifest: d.manifest },
        () => describeDelta(path, d),
      );
      return 0;
    }
    const layout = await readPackage(path);
    printResult(
      ctx,
      Boolean(values.json),
      {
        ok: true,
        package: path,
        signature: layout.signature ? 'present' : 'none',
        signatures: layout.signatures.length,
        archive: layout.archive,
        manifest: layout.manifest,
      },
      () => describePackage(path, layout),
    );
    return 0;
  },
};
export default command;
