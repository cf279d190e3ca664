import { shown } from '../util/terminal.js';
import { fmtBytes } from '../util/units.js';
import { countPages } from './pages.js';
import type { PackageLayout } from './reader.js';

/** What `airlock inspect` prints of a package: a prose summary of its manifest (pure). */
export function describePackage(path: string, l: PackageLayout): string {
  const m = l.manifest;
  const bytes = m.files.reduce((n, f) => n + f.size, 0);
  return [
    shown`package    ${path}`,
    shown`domain     ${m.domain}`,
    shown`version    ${m.version}`,
    shown`job        ${m.jobId ?? '-'}`,
    shown`created    ${m.createdAt}`,
    shown`pages      ${m.pageCount ?? `${countPages(m.files)} (counted from the file list; the manifest carries no count)`}`,
    shown`archive    ${m.archive.name} (${m.archive.format}, ${fmtBytes(m.archive.size)}, sha256 ${m.archive.sha256})`,
    shown`files      ${m.files.length} (${fmtBytes(bytes)})`,
    `signature  ${l.signatures.length > 1 ? `${l.signatures.length} present (not checked; run airlock verify)` : l.signature ? 'present (not checked; run airlock verify)' : 'none'}`,
    ...(m.sequence !== undefined ? [shown`sequence   ${m.sequence}`] : []),
    ...(m.expiresAt !== undefined ? [shown`expires    ${m.expiresAt}`] : []),
    ...(m.audience !== undefined ? [shown`audience   ${m.audience}`] : []),
  ].join('\n');
}
