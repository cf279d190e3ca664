import { isAlias, isCollection, isMap, isScalar, visit, type Alias, type Document, type LineCounter, type Node } from 'yaml';
import { UsageError } from '../errors.js';
import { readRegularFile } from '../util/fsx.js';

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
  /**
   * Nodes that aliases may add to the values once expanded (the library's default budget of 100
   * aliases refuses real files that Helm reads). Counted by checkStructure, before any JS object
   * is built: a file of 60,000 aliases or of billion-laughs shape is refused in linear time.
   */
  aliasExpansion: 10_000,
};

const bad = (message: string, subject: string) => new UsageError(message, { subject }, 'AIRLOCK_BAD_VALUES');

/**
 * Read at most the limit, refusing what is not a regular file (a FIFO, /dev/zero) or too big.
 * Opened non-blocking: a plain open of a FIFO with no writer never returns, and no signal reaches it.
 */
export async function readBounded(file: string): Promise<string> {
  const bytes = await readRegularFile(file, { maxBytes: VALUES_LIMITS.bytes, refuse: (why) => bad(`values file ${file} ${why}`, file) });
  return bytes.toString('utf8');
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

const fmt = (n: number) => (n > Number.MAX_SAFE_INTEGER ? `more than ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}` : n.toLocaleString('en-US'));

/**
 * Every alias's anchor, found in one pass in document order: the last node before the alias that
 * carries its anchor, as YAML and the library say. (The library's `Alias.resolve(doc)` walks the
 * whole document for each alias: 20,000 aliases took 49 s.) Refuses more aliases than the
 * expansion budget at once: each one adds at least one node.
 */
function resolveAliases(doc: Document, file: string): { targets: Map<Alias, Node>; aliases: number; written: number } {
  const anchors = new Map<string, Node>();
  const targets = new Map<Alias, Node>();
  let aliases = 0;
  let written = 0;
  visit(doc, {
    Node(_key, node) {
      if (isAlias(node)) {
        aliases++;
        const target = anchors.get(node.source);
        if (target !== undefined) targets.set(node, target);
        return;
      }
      written++;
      if (node.anchor) anchors.set(node.anchor, node);
    },
  });
  if (aliases > VALUES_LIMITS.aliasExpansion) {
    throw bad(
      `values file ${file} refused: its ${fmt(aliases)} aliases expand to more than ${fmt(VALUES_LIMITS.aliasExpansion)} nodes (an alias bomb?); write the repeated values out`,
      file,
    );
  }
  return { targets, aliases, written };
}

/**
 * One pass over the parsed document (the yaml library's own `uniqueKeys` compares every pair of
 * keys: 200,000 keys were still parsing after 120 s): duplicate keys, keys that are not scalars,
 * nesting beyond the limit with aliases followed, aliases that contain themselves, and the nodes
 * aliases add once expanded (refused past VALUES_LIMITS.aliasExpansion). Each node is measured
 * once (memoised), so aliases cost no more than the nodes they name. After it, the document is
 * safe for the library's `toJS` without its own alias budget (pass `maxAliasCount: -1`: its
 * count walks the whole document again for aliases inside anchored collections).
 */
export function checkStructure(doc: Document, file: string, lines: LineCounter): void {
  const where = (n: Node | null | undefined) => {
    const at = n?.range?.[0];
    return at === undefined ? file : `${file}:${lines.linePos(at).line}`;
  };
  const { targets, aliases, written } = resolveAliases(doc, file);
  const heights = new Map<Node, number>();
  /** Nodes of the expanded value under each node, aliases followed. */
  const sizes = new Map<Node, number>();
  const open = new Set<Node>();
  const visitNode = (node: unknown, path: string[], depth: number): { height: number; size: number } => {
    if (isAlias(node)) {
      const target = targets.get(node);
      if (target === undefined) return { height: 0, size: 1 }; // reported by the parser as an error already
      if (open.has(target)) throw bad(`values file ${where(node)}: the alias *${node.source} at ${keyPath(path)} contains itself`, keyPath(path));
      return visitNode(target, path, depth);
    }
    if (!isCollection(node)) return { height: 0, size: node === null || node === undefined ? 0 : 1 };
    const known = heights.get(node);
    const tooDeep = () => bad(`values file ${where(node)}: ${keyPath(path)} nests deeper than ${VALUES_LIMITS.depth} levels`, keyPath(path));
    if (depth + (known ?? 1) > VALUES_LIMITS.depth) throw tooDeep();
    if (known !== undefined) return { height: known, size: sizes.get(node)! };
    open.add(node);
    let below = 0;
    let size = 1;
    if (isMap(node)) {
      const seen = new Set<string>();
      for (const pair of node.items) {
        const k = isAlias(pair.key) ? targets.get(pair.key) : pair.key;
        if (k !== null && k !== undefined && !isScalar(k))
          throw bad(`values file ${where(k as Node)}: a key at ${keyPath(path)} is not a plain value`, keyPath(path));
        const name = String(k === null || k === undefined ? null : k.value);
        if (seen.has(name)) throw bad(`values file ${where(pair.key as Node)}: duplicate key ${keyPath([...path, name])}`, keyPath([...path, name]));
        seen.add(name);
        const v = visitNode(pair.value, [...path, name], depth + 1);
        below = Math.max(below, v.height);
        size += (pair.key === null || pair.key === undefined ? 0 : 1) + v.size;
      }
    } else {
      node.items.forEach((item, i) => {
        const v = visitNode(item, [...path, String(i)], depth + 1);
        below = Math.max(below, v.height);
        size += v.size;
      });
    }
    open.delete(node);
    heights.set(node, below + 1);
    sizes.set(node, size);
    return { height: below + 1, size };
  };
  const total = visitNode(doc.contents, [], 0).size;
  // Keys count once per pair, as `written` counts them: the difference is what aliases add.
  const added = total - written;
  if (added > VALUES_LIMITS.aliasExpansion) {
    throw bad(
      `values file ${file} refused: its ${fmt(aliases)} aliases expand to ${fmt(added)} more nodes, more than ${fmt(VALUES_LIMITS.aliasExpansion)} (an alias bomb?); write the repeated values out`,
      file,
    );
  }
}
