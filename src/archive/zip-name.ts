import { ARCHIVE_CODES, unsafe } from './errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * A zip entry name. Bit 11 says UTF-8 (APPNOTE 4.4.4); without it the spec says CP437, but
 * macOS and many tools write UTF-8 anyway. We accept ASCII or valid UTF-8 and refuse anything
 * else by name rather than guess a code page (a wrong guess changes which file is which).
 */
export function decodeZipName(bytes: Buffer): string {
  try {
    return utf8.decode(bytes);
  } catch {
    throw unsafe(ARCHIVE_CODES.UNSAFE_PATH, bytes.toString('latin1'), 'zip entry name is not valid UTF-8');
  }
}

/** Info-ZIP Unicode Path extra field (0x7075): some readers prefer it to the name. It must agree. */
export function checkUnicodePathField(field: Buffer, name: string): void {
  if (field.length < 5) return;
  let alt: string;
  try {
    alt = utf8.decode(field.subarray(5));
  } catch {
    alt = '\uFFFD';
  }
  if (alt !== name) {
    throw unsafe(ARCHIVE_CODES.UNSAFE_PATH, name, `Unicode Path extra field names another file (${JSON.stringify(alt)}): readers would disagree`);
  }
}

/** Walk the extra fields (id, size, data). Pure. */
export function extraFields(extra: Buffer): Map<number, Buffer> {
  const out = new Map<number, Buffer>();
  let i = 0;
  while (i + 4 <= extra.length) {
    const id = extra.readUInt16LE(i);
    const size = extra.readUInt16LE(i + 2);
    if (i + 4 + size > extra.length) break;
    if (!out.has(id)) out.set(id, extra.subarray(i + 4, i + 4 + size));
    i += 4 + size;
  }
  return out;
}
