import { describe, expect, it } from 'vitest';
import { applyDelta, createDelta, getDeltaTargetSize } from 'fossil-delta';
import { applyFossil, fossilTargetSize } from '../../src/delta/fossil-apply.js';
import { mutants } from '../helpers/mutate.js';

/**
 * Our fossil delta applier (src/delta/fossil-apply.ts) against the library's own: the same
 * bytes for every delta the library writes, and never different bytes for a damaged one.
 */
let seed = 42;
const rand = (n: number) => {
  seed = (seed * 1103515245 + 12345) & 0x7fffffff;
  return seed % n;
};
const page = (n: number) =>
  Buffer.from(
    Array.from({ length: n }, (_, i) => `<li><a href="/p${i % 97}">Page ${i}</a></li>`)
      .join('\n')
      .slice(0, n),
  );

/** A base and a successor of the kinds a docs update makes: a line inserted everywhere, an edit, a shrink, random bytes. */
function pairs(): [Buffer, Buffer][] {
  const out: [Buffer, Buffer][] = [];
  for (let i = 0; i < 40; i++) {
    const a = page(200 + rand(20_000));
    const at = rand(a.length);
    const kinds: Buffer[] = [
      Buffer.concat([a.subarray(0, at), Buffer.from('<li><a href="/whats-new">What is new</a></li>'), a.subarray(at)]),
      Buffer.from(a.toString().replace(/Page 1/g, 'Page one')),
      a.subarray(0, rand(a.length)),
      Buffer.from(Array.from({ length: rand(3000) }, () => rand(256))),
      Buffer.alloc(0),
    ];
    for (const b of kinds) out.push([a, b]);
  }
  return out;
}

describe('fossil delta applier', () => {
  it('rebuilds exactly what the library rebuilds, for every delta the library writes', () => {
    for (const [a, b] of pairs()) {
      const d = Buffer.from(createDelta(new Uint8Array(a), new Uint8Array(b)));
      expect(fossilTargetSize(d)).toBe(getDeltaTargetSize(d));
      const ours = applyFossil(a, d, 1 << 20);
      expect(ours.equals(b)).toBe(true);
      expect(ours.equals(Buffer.from(applyDelta(new Uint8Array(a), new Uint8Array(d))))).toBe(true);
    }
  });

  it('a damaged delta (flips, truncations, huge numbers) is refused or gives what the library gives, never other bytes', () => {
    const [a, b] = [page(6000), Buffer.from(page(6000).toString().replace('Page 3', 'Page three') + '\n<footer>new</footer>')];
    const d = Buffer.from(createDelta(new Uint8Array(a), new Uint8Array(b)));
    let refused = 0;
    for (const m of mutants(d, 400)) {
      let ours: Buffer | Error;
      try {
        ours = applyFossil(a, m.bytes, 1 << 20);
      } catch (err) {
        ours = err as Error;
      }
      if (ours instanceof Error) {
        refused++;
        continue;
      }
      // Whatever we accept, the library accepts with the same bytes (checksum and size agree).
      expect(Buffer.from(applyDelta(new Uint8Array(a), new Uint8Array(m.bytes))).equals(ours), `mutant ${m.index} (${m.mutation})`).toBe(true);
    }
    expect(refused).toBeGreaterThan(300);
  });

  it('a target larger than the caller allows is refused before anything is allocated', () => {
    expect(() => applyFossil(Buffer.alloc(0), Buffer.from('~~~~~~\n0;'), 1 << 20)).toThrow(/announces \d+ bytes, more than 1048576/);
  });

  it('an insert that runs past the end of the delta is refused (the library pads with zeros)', () => {
    const d = Buffer.from('5\n5:ab'); // claims 5 inserted bytes, carries 2, no checksum
    expect(() => applyFossil(Buffer.alloc(0), d, 100)).toThrow(/an insert reads past the end of the patch/);
  });
});
