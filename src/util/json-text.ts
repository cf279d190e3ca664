/**
 * Untrusted JSON text, said in words: UTF-8 first, then JSON.parse, then one value per key.
 * Messages never carry V8's text or the input's bytes (a file may be anything, even a symlink to a
 * secret): a character position at most.
 */

/**
 * The first object key that appears twice in one object of `text` (valid JSON), or null. JSON.parse
 * keeps the last one silently, so a reviewer reading the first would approve another document.
 * One pass over the text; keys are compared decoded ("a" and "\u0061" are the same key).
 */
export function firstDuplicateKey(text: string): string | null {
  const open: (Set<string> | null)[] = [];
  let keyNext = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (text.charCodeAt(j) !== 0x22) j += text.charCodeAt(j) === 0x5c /* \ */ ? 2 : 1;
      const top = open[open.length - 1];
      if (keyNext && top) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.has(key)) return key;
        top.add(key);
      }
      keyNext = false;
      i = j;
    } else if (c === 0x7b /* { */) {
      open.push(new Set());
      keyNext = true;
    } else if (c === 0x5b /* [ */) {
      open.push(null);
    } else if (c === 0x7d /* } */ || c === 0x5d /* ] */) {
      open.pop();
    } else if (c === 0x2c /* , */) {
      keyNext = open[open.length - 1] instanceof Set;
    }
  }
  return null;
}

/** Why JSON.parse refused `err`, in words: where, when the parser said so; never its text. */
export function jsonSyntaxProblem(err: unknown): string {
  const msg = err instanceof Error ? err.message : '';
  const pos = /at position (\d+)/.exec(msg)?.[1];
  if (pos !== undefined) return `is not valid JSON (at character ${pos})`;
  if (/Unexpected end of JSON input/.test(msg)) return 'is not valid JSON (it ends before its value does)';
  return 'is not valid JSON';
}

/**
 * Decode and parse untrusted JSON bytes (bounded by the caller before this): not UTF-8, not JSON,
 * or a key named twice in one object (`what` names the kind of document, "a manifest") are
 * refused with `refuse(why)`.
 */
export function parseJsonText(bytes: Uint8Array, refuse: (why: string) => Error, what: string): unknown {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refuse('is not UTF-8 text');
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw refuse(jsonSyntaxProblem(err));
  }
  const dup = firstDuplicateKey(text);
  if (dup !== null) throw refuse(`names the key ${JSON.stringify(dup.slice(0, 80))} twice in one object: every key appears once in ${what}`);
  return value;
}
