import { shown } from '../util/terminal.js';
import { fmtBytes } from '../util/units.js';
import type { DeltaLayout } from './index.js';

/** What `airlock inspect` prints of a delta package: a prose summary of its manifest (pure). */
export function describeDelta(path: string, l: DeltaLayout): string {
  const m = l.manifest;
  const count = (k: string) => m.ops.filter((op) => op.kind === k).length;
  return [
    shown`package    ${path} (delta)`,
    shown`domain     ${m.domain}`,
    shown`version    ${m.version}`,
    shown`base       ${m.base.version} (manifest sha256 ${m.base.manifestSha256}): import needs exactly this version in the store`,
    shown`target     manifest sha256 ${m.target.manifestSha256}`,
    shown`created    ${m.createdAt}`,
    `changes    ${count('whole')} whole, ${count('patch')} patched, ${count('copy')} copied, ${m.removed.length} removed`,
    `payload    ${fmtBytes(m.payload.size)} (${fmtBytes(m.payload.expandedSize)} expanded)`,
    `signature  ${l.signature ? 'present (not checked; run airlock verify)' : 'none'}`,
  ].join('\n');
}
