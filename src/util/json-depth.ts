const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const OPEN_ARRAY = 0x5b;
const CLOSE_OBJECT = 0x7d;
const CLOSE_ARRAY = 0x5d;

/**
 * Where untrusted JSON first nests deeper than `max`, counted on the bytes BEFORE parsing:
 * JSON.parse copes with any depth, but whatever walks the value afterwards (schema checks,
 * JSON.stringify for --json) overflows the stack on a few thousand levels. One linear pass,
 * brackets outside strings (all ASCII, so UTF-8 bytes and UTF-16 units scan alike); malformed
 * JSON is left for JSON.parse to name. Returns the offset of the bracket past `max`, or -1. Pure.
 */
export function jsonTooDeepAt(bytes: Uint8Array, max: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i]!;
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > max) return i;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return -1;
}
