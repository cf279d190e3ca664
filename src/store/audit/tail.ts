import { CHUNK, MAX_LINE_BYTES, openLog, type AuditLine } from './files.js';
import { asLine, MAX_SHOW_BYTES, unreadable } from './show.js';

/**
 * The last `limit` lines (read only), for `audit show`, read backwards from the log's end in
 * CHUNK reads: the work is bounded by what is shown, never by the log's size or its number of
 * lines (a log of millions of empty lines is shown at once). A line longer than MAX_LINE_BYTES is
 * one unreadable entry; reading stops there, and after MAX_SHOW_BYTES (`earlierUnread`: lines
 * before were not read; audit verify reads the whole log). A log that is not a regular file is
 * refused (exit 4). Torn bytes after the last line are not a line.
 */
export async function readAuditTail(store: string, limit = 1000): Promise<{ lines: AuditLine[]; earlierUnread: boolean }> {
  const log = await openLog(store);
  if (!log) return { lines: [], earlierUnread: false };
  const newestFirst: AuditLine[] = [];
  const add = (line: Buffer) => {
    if (line.length > MAX_LINE_BYTES)
      return void newestFirst.push(unreadable(`(longer than ${MAX_LINE_BYTES} bytes) ${line.toString('utf8', 0, 200).slice(0, 160)}`));
    const text = line.toString('utf8');
    let v: unknown = null;
    if (text.startsWith('{')) {
      try {
        v = JSON.parse(text);
      } catch {
        v = null;
      }
    }
    newestFirst.push(asLine(v, text));
  };
  let pos = log.size;
  let carry = Buffer.alloc(0); // the start of a line whose beginning is further back
  let tail = true; // the bytes after the last "\n" are a torn tail, not a line
  let earlierUnread = false;
  try {
    while (newestFirst.length < limit && pos > 0) {
      if (log.size - pos >= MAX_SHOW_BYTES) {
        earlierUnread = true;
        break;
      }
      const n = Math.min(CHUNK, pos);
      pos -= n;
      const chunk = Buffer.allocUnsafe(n);
      let got = 0;
      while (got < n) {
        const { bytesRead } = await log.fh.read(chunk, got, n - got, pos + got);
        if (bytesRead === 0) break;
        got += bytesRead;
      }
      const data = carry.length ? Buffer.concat([chunk.subarray(0, got), carry]) : chunk.subarray(0, got);
      let end = data.length;
      for (let nl = data.lastIndexOf(0x0a, end - 1); nl >= 0 && newestFirst.length < limit; nl = end > 0 ? data.lastIndexOf(0x0a, end - 1) : -1) {
        if (tail) tail = false;
        else add(data.subarray(nl + 1, end));
        end = nl;
      }
      if (newestFirst.length >= limit) break;
      carry = Buffer.from(data.subarray(0, end));
      if (pos === 0 && !tail && carry.length > 0)
        add(carry); // the log's first line
      else if (carry.length > MAX_LINE_BYTES) {
        // Longer than a line may be (a complete one, or bytes after the last line that verify names
        // as the next line): one unreadable entry, and nothing before it is read.
        add(carry);
        earlierUnread = pos > 0;
        break;
      }
    }
  } finally {
    await log.fh.close();
  }
  return { lines: newestFirst.reverse(), earlierUnread: earlierUnread || (pos > 0 && newestFirst.length < limit) };
}

/** Every line (read only), for `audit show` and tests; at most `limit` from the end. */
export async function readAudit(store: string, limit = 1000): Promise<AuditLine[]> {
  return (await readAuditTail(store, limit)).lines;
}
