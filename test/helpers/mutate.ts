/**
 * Bounded, seeded mutation fuzzing for every parser of untrusted input (archives, packages,
 * manifests, API answers, values files, HTTP requests). Deterministic: a failing case names its
 * seed and index, and re-running with the same seed gives the same bytes.
 */
import { createRng, type Rng } from '../../fixtures/prng.js';

export type Mutation = 'flip' | 'truncate' | 'splice' | 'zero' | 'extend' | 'duplicate';
export interface Mutant {
  bytes: Buffer;
  mutation: Mutation;
  at: number;
  index: number;
}

function mutateOnce(rng: Rng, input: Buffer): { bytes: Buffer; mutation: Mutation; at: number } {
  const len = input.length;
  const at = len === 0 ? 0 : rng.int(0, len - 1);
  const mutation = rng.pick<Mutation>(['flip', 'flip', 'flip', 'truncate', 'splice', 'zero', 'extend', 'duplicate']);
  switch (mutation) {
    case 'flip': {
      const b = Buffer.from(input);
      const n = rng.int(1, 4);
      for (let i = 0; i < n && len > 0; i++) {
        const j = rng.int(0, len - 1);
        b[j] = b[j]! ^ (1 << rng.int(0, 7));
      }
      return { bytes: b, mutation, at };
    }
    case 'truncate':
      return { bytes: input.subarray(0, at), mutation, at };
    case 'splice': {
      const b = Buffer.from(input);
      const n = Math.min(rng.int(1, 64), len - at);
      for (let i = 0; i < n; i++) b[at + i] = rng.int(0, 255);
      return { bytes: b, mutation, at };
    }
    case 'zero': {
      const b = Buffer.from(input);
      b.fill(0, at, Math.min(len, at + rng.int(1, 512)));
      return { bytes: b, mutation, at };
    }
    case 'extend':
      return { bytes: Buffer.concat([input, Buffer.alloc(rng.int(1, 4096), rng.int(0, 255))]), mutation, at: len };
    case 'duplicate': {
      const end = Math.min(len, at + rng.int(1, 1024));
      return { bytes: Buffer.concat([input.subarray(0, end), input.subarray(at, end), input.subarray(end)]), mutation, at };
    }
  }
}

/** `count` mutants of `input`, each one to three stacked mutations, from `seed`. */
export function* mutants(input: Buffer, count: number, seed = 0x5eed): Generator<Mutant> {
  const rng = createRng(seed);
  for (let index = 0; index < count; index++) {
    let cur = { bytes: input, mutation: 'flip' as Mutation, at: 0 };
    const stack = rng.int(1, 3);
    for (let s = 0; s < stack; s++) cur = mutateOnce(rng, cur.bytes);
    yield { ...cur, index };
  }
}

/**
 * Structure-aware mutants of a JSON value: fields removed, set to null, to the wrong type, to
 * huge strings or numbers, and values nested deeply. For API answers, manifests, values files.
 */
export function* jsonMutants(value: unknown, count: number, seed = 0x15011): Generator<{ value: unknown; what: string; index: number }> {
  const rng = createRng(seed);
  const paths: string[][] = [];
  const walk = (v: unknown, p: string[]) => {
    paths.push(p);
    if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) walk(c, [...p, k]);
  };
  walk(value, []);
  const replacements: Array<[string, () => unknown]> = [
    ['null', () => null],
    ['removed', () => undefined],
    ['empty string', () => ''],
    ['number', () => rng.pick([0, -1, 1e308, Number.MAX_SAFE_INTEGER + 2, 0.5])],
    ['string', () => 'x'.repeat(rng.pick([1, 300, 70_000]))],
    ['control characters', () => '\u001b[31mred\u001b]0;title\u0007\r\n\u0000'],
    ['array', () => []],
    ['object', () => ({})],
    [
      'deep',
      () => {
        let d: unknown = 1;
        for (let i = 0; i < 5000; i++) d = [d];
        return d;
      },
    ],
    ['boolean', () => rng.pick([true, false])],
  ];
  for (let index = 0; index < count; index++) {
    const copy = structuredClone(value) as Record<string, unknown>;
    const path = rng.pick(paths);
    const [what, make] = rng.pick(replacements);
    const v = make();
    if (path.length === 0) {
      yield { value: v, what: `root → ${what}`, index };
      continue;
    }
    let parent = copy as Record<string, unknown>;
    for (const k of path.slice(0, -1)) parent = parent[k] as Record<string, unknown>;
    const last = path[path.length - 1]!;
    if (v === undefined) delete parent[last];
    else parent[last] = v;
    yield { value: copy, what: `${path.join('.')} → ${what}`, index };
  }
}

/** JSON.stringify, except that a chain of one-element arrays (jsonMutants' 5,000-deep value) is written without recursing. */
export function toJson(v: unknown): string {
  if (Array.isArray(v)) {
    let depth = 0;
    let inner: unknown = v;
    while (Array.isArray(inner) && inner.length === 1) {
      inner = inner[0];
      depth++;
    }
    if (depth > 1) return '['.repeat(depth) + toJson(inner) + ']'.repeat(depth);
    return `[${v.map(toJson).join(',')}]`;
  }
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}
