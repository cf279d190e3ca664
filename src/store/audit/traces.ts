import { lstat, readdir } from 'node:fs/promises';
import { storePaths, trustPaths } from '../paths.js';

// What tells a lost log from a new one, and what a crash leaves from what was written by hand.

/**
 * What the store holds that only a logged change puts there: versions, or a trust record (policy,
 * chain entries, seen order). A folder that cannot be read counts as holding (fail closed); one that is
 * not a folder holds nothing here (the store's own checks name it).
 */
export async function holdsRecords(store: string): Promise<string | null> {
  const holds = (dir: string) =>
    readdir(dir).then(
      (names) => names.length > 0,
      (err: NodeJS.ErrnoException) => err.code !== 'ENOENT' && err.code !== 'ENOTDIR',
    );
  const there = (file: string) =>
    lstat(file).then(
      () => true,
      (err: NodeJS.ErrnoException) => err.code !== 'ENOENT' && err.code !== 'ENOTDIR',
    );
  if (await holds(storePaths(store).versions)) return 'versions';
  const t = trustPaths(store);
  // An empty chain folder is a trust init cut short before its first entry: no record yet.
  if ((await there(t.policy)) || (await there(t.seen)) || (await holds(t.chain))) return 'trust records';
  return null;
}

/**
 * What a crash in the middle of an append can leave after the last line: the start of the next
 * line as airlock writes it (`{"n":K,"time":"…`, cut anywhere), or zeros (a file system that had
 * grown the file but not yet written its block). Anything else after the last line was put there.
 */
export function crashLeftover(bytes: Buffer, k: number): boolean {
  if (bytes.every((b) => b === 0)) return true;
  const start = Buffer.from(`{"n":${k},"time":"`);
  const n = Math.min(bytes.length, start.length);
  if (!bytes.subarray(0, n).equals(start.subarray(0, n))) return false;
  // The rest is part of one line as JSON.stringify writes it: UTF-8 (a character may be cut at the
  // very end), no control character, no second line's start.
  return !bytes.some((b) => b < 0x20) && utf8CutAtEnd(bytes) && bytes.indexOf('{"n":', 1) === -1;
}

/** Valid UTF-8 but for a last character cut short (its lead byte and fewer continuation bytes than it needs). */
function utf8CutAtEnd(b: Buffer): boolean {
  let i = b.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && (b[i]! & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  const lead = i >= 0 ? b[i]! : 0;
  const needs = lead >= 0xf0 && lead <= 0xf4 ? 3 : lead >= 0xe0 && lead <= 0xef ? 2 : lead >= 0xc2 && lead <= 0xdf ? 1 : 0;
  const cut = needs > continuation;
  // A cut character must still be the start of one (E0 A0…, ED 80–9F, F0 90…, F4 80–8F: no surrogate,
  // nothing past U+10FFFF); completed with the lowest continuation bytes, it decodes.
  const completed = cut && continuation > 0 ? Buffer.concat([b.subarray(i), Buffer.alloc(needs - continuation, 0x80)]) : null;
  try {
    const decoder = new TextDecoder('utf-8', { fatal: true });
    decoder.decode(b.subarray(0, cut ? i : b.length));
    if (completed) decoder.decode(completed);
    return true;
  } catch {
    return false;
  }
}
