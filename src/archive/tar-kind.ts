import type { EntryKind } from './guard.js';

/** node-tar's type names (tar/dist/esm/types.js) to what the guard decides on. Unknown = refused. */
const KINDS: Record<string, EntryKind> = {
  File: 'file',
  OldFile: 'file',
  ContiguousFile: 'file',
  Directory: 'dir',
  SymbolicLink: 'symlink',
  Link: 'hardlink',
  CharacterDevice: 'device',
  BlockDevice: 'device',
  FIFO: 'fifo',
};

export function tarKind(type: string): EntryKind {
  return KINDS[type] ?? 'other';
}

/**
 * A pax or GNU long-name record with a NUL inside the name (not just NUL padding at the end).
 * node-tar cuts the value at the NUL, so two tar readers would see two different names.
 * Returns the offending name with its NUL, or undefined.
 */
export function nulInMeta(meta: string): string | undefined {
  const record = /(?:^|\n)\d+ (?:path|linkpath)=([^\n]*)/g;
  for (const m of meta.matchAll(record)) {
    if (m[1]!.includes('\0')) return m[1];
  }
  const trimmed = meta.replace(/\0+$/, '');
  return trimmed.includes('\0') ? trimmed : undefined;
}
