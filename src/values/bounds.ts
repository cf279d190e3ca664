import { open } from 'node:fs/promises';
import { isAlias, isCollection, isMap, isScalar, type Document, type LineCounter, type Node } from 'yaml';
import { UsageError } from '../errors.js';

/**
 * Bounds of a values file, enforced before and while it is parsed, all in linear time: a Helm
 * values file is kilobytes, so anything near these limits is a mistake or an attack, and every
 * refusal is a usage error (exit 2) that names the file, the place and the limit.
 */
export const VALUES_LIMITS = {
  /** Bytes read at most (checked before reading: a 50 MB scalar used to peak at 1.8 GB). */
  bytes: 1024 * 1024,
  /** Nesting of mappings and sequences, aliases followed. */
  depth: 64,
  /** The yaml library's alias-expansion budget (its default of 100 refuses real files that Helm reads). */
  aliasExpansion: 10_000,
};

const bad = (message: string, subject: string) => new UsageError(message, { subject }, 'AIRLOCK_BAD_VALUES');

/** Read at most the limit, refusing what is not a regular file (a FIFO, /dev/zero) or too big. */
export async function readBounded(file: string): Promise<string> {
  const fh = await open(file, 'r').catch((err: NodeJS.ErrnoException) => {
    throw bad(`cannot read values file ${file}: ${err.code ?? err.message}`, file);
  });
  try {
    const st = await fh.stat();
    if (!st.isFile()) throw bad(`values file ${file} is not a regular file`, file);
    const max = VALUES_LIMITS.bytes;
    if (st.size > max) throw bad(`values file ${file} is ${st.size} bytes; the limit is ${max} bytes (1 MiB)`, file);
    const buf = Buffer.alloc(max + 1);
    let n = 0;
    for (let r = 1; r > 0 && n <= max; n += r) r = (await fh.read(buf, n, max + 1 - n, n)).bytesRead;
    if (n > max) throw bad(`values file ${file} grew past the limit of ${max} bytes (1 MiB) while it was read`, file);
    return buf.subarray(0, n).toString('utf8');
  } finally {
    await fh.close();
  }
}

/**
 * Flow nesting (`[[[[...`) measured on the text before parsing: the parser recovers from a stack
 * overflow at every level and took ~10 s on 500,000 brackets. Quotes and comments are skipped.
 */
export function checkFlowDepth(text: string, file: string): void {
  let depth = 0;
  let line = 1;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '\n') line++;
    else if (c === '#' && (i === 0 || /\s/.test(text[i - 1]!))) while (i + 1 < text.length && text[i + 1] !== '\n') i++;
    else if (c === '"' || c === "'") {
      for (i++; i < text.length && text[i] !== c; i++) {
        if (c === '"' && text[i] === '\\') i++;
        else if (text[i] === '\n') line++;
      }
      if (c === "'" && text[i + 1] === "'") i++; // '' inside a single-quoted string
    } else if (c === '[' || c === '{') {
      if (++depth > VALUES_LIMITS.depth) throw bad(`values file ${file}:${line} nests deeper than ${VALUES_LIMITS.depth} levels`, `${file}:${line}`);
    } else if ((c === ']' || c === '}') && depth > 0) depth--;
  }
}

const keyPath = (p: readonly string[]) => p.join('.') || '(top level)';

/**
 * One pass over the parsed document (the yaml library's own `uniqueKeys` compares every pair of
 * keys: 200,000 keys were still parsing after 120 s): duplicate keys, keys that are not scalars,
 * nesting beyond the limit with aliases followed, and aliases that contain themselves. Each node
 * is measured once (memoised), so aliases cost no more than the nodes they name.
 */
export function checkStructure(doc: Document, file: string, lines: LineCounter): void {
  const where = (n: Node | null | undefined) => {
    const at = n?.range?.[0];
    return at === undefined ? file : `${file}:${lines.linePos(at).line}`;
  };
  const heights = new Map<Node, number>();
  const open = new Set<Node>();
  const visit = (node: unknown, path: string[], depth: number): number => {
    if (isAlias(node)) {
      const target = node.resolve(doc);
      if (target === undefined) return 0; // reported by the parser as an error already
      if (open.has(target)) throw bad(`values file ${where(node)}: the alias *${node.source} at ${keyPath(path)} contains itself`, keyPath(path));
      return visit(target, path, depth);
    }
    if (!isCollection(node)) return 0;
    const known = heights.get(node);
    const tooDeep = () => bad(`values file ${where(node)}: ${keyPath(path)} nests deeper than ${VALUES_LIMITS.depth} levels`, keyPath(path));
    if (depth + (known ?? 1) > VALUES_LIMITS.depth) throw tooDeep();
    if (known !== undefined) return known;
    open.add(node);
    let below = 0;
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const k = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
        if (k !== null && k !== undefined && !isScalar(k)) throw bad(`values file ${where(k as Node)}: a key at ${keyPath(path)} is not a plain value`, keyPath(path));
        const name = String(k === null || k === undefined ? null : k.value);
        if (seen.has(name)) throw bad(`values file ${where(pair.key as Node)}: duplicate key ${keyPath([...path, name])}`, keyPath([...path, name]));
        seen.add(name);
        below = Math.max(below, visit(pair.value, [...path, name], depth + 1));
      }
    } else {
      node.items.forEach((item, i) => { below = Math.max(below, visit(item, [...path, String(i)], depth + 1)); });
    }
    open.delete(node);
    heights.set(node, below + 1);
    return below + 1;
  };
  visit(doc.contents, [], 0);
}
