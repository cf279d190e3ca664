import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, rm } from 'node:fs/promises';
import { gzipSync } from 'node:zlib';
import { extractArchive, scanArchive } from '../../src/archive/index.js';
import { AirlockError, EXIT, VerificationError } from '../../src/errors.js';
import { mutants } from '../helpers/mutate.js';
import { pax, tar, tgz, zip, type TarEntry } from '../helpers/evil-archives.js';
import { sandbox, type Sandbox } from './sandbox.js';

/**
 * Bounded mutation fuzzing of export archives through what verify (scan) and preview/import
 * (extract into a fresh folder) do: every mutant is either read fine or refused with a
 * VerificationError (exit 4) — never a raw or internal error, never a hang, never a write outside
 * the destination. Seeded: a failure names its format, seed and index, and re-runs identically.
 */
const site: TarEntry[] = [
  { name: 'site/', type: '5' },
  { name: 'site/index.html', data: '<!doctype html><title>Home</title>' + '<p>Welcome to the docs.</p>\n'.repeat(40) },
  { name: 'site/guide/', type: '5' },
  { name: 'site/guide/start.html', data: '<!doctype html><title>Start</title>' },
  { name: 'site/rules/A001/index.html', data: 'upper' },
  { name: 'site/rules/a001/index.html', data: 'lower' },
  { name: 'site/_next/static/chunks/main-8349a79b.js', data: 'console.log("main")'.repeat(20) },
  pax({ path: 'site/' + 'long-folder-name/'.repeat(8) + 'page.html' }),
  { name: 'site/placeholder', data: 'long name through pax' },
];
const zipEntries = site
  .filter((e) => e.type === undefined || e.type === '0')
  .map((e) => ({ name: e.name, data: e.data, method: /index/.test(String(e.name)) ? 8 : 0 }));

/**
 * Raw mutants of a tar.gz nearly all die at the gzip CRC, so the tar parser behind the gzip layer
 * also gets the inner tar's mutants, re-compressed (`wrap`). `someOk`: honest-enough mutants exist.
 */
const ARCHIVES: { name: string; ext: string; bytes: Buffer; seed: number; wrap?: (b: Buffer) => Buffer; someOk: boolean }[] = [
  { name: 'tar', ext: 'tar', bytes: tar(site), seed: 0x7a01, someOk: true },
  { name: 'tar.gz (compressed bytes mutated)', ext: 'tar.gz', bytes: tgz(site), seed: 0x7a02, someOk: false },
  { name: 'tar.gz (inner tar mutated)', ext: 'tar.gz', bytes: tar(site), seed: 0x7a04, wrap: (b) => gzipSync(b), someOk: true },
  { name: 'zip', ext: 'zip', bytes: zip(zipEntries), seed: 0x7a03, someOk: true },
];
/** FUZZ_N=3000 for a longer local run (3,000 per format passed when this was written). */
const PER_FORMAT = Number(process.env.FUZZ_N ?? 200);
const TIME_LIMIT_MS = 5_000;

let sb: Sandbox;
beforeAll(async () => (sb = await sandbox()));
afterAll(() => sb.cleanup());

function withTimeLimit<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`hang: ${what} took over ${TIME_LIMIT_MS} ms`)), TIME_LIMIT_MS)));
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

/** 'ok', or the refusal's code; anything else fails the test with the mutant's name. */
async function outcome(p: Promise<unknown>, what: string): Promise<string> {
  try {
    await withTimeLimit(p, what);
    return 'ok';
  } catch (err) {
    expect(err, `${what}: ${String(err)}`).toBeInstanceOf(VerificationError);
    expect((err as AirlockError).exitCode, what).toBe(EXIT.VERIFICATION);
    expect((err as AirlockError).code, what).not.toBe('AIRLOCK_INTERNAL');
    return (err as AirlockError).code;
  }
}

describe('export archive mutation fuzz (scan and extract)', () => {
  for (const { name, ext: fmt, bytes, seed, wrap, someOk } of ARCHIVES) {
    it(
      `${name}: ${PER_FORMAT} mutants are read or refused with exit 4, bounded in time, nothing written outside the destination`,
      async () => {
        expect((await scanArchive({ path: await sb.put(`honest.${fmt}`, wrap ? wrap(bytes) : bytes) })).files.length).toBe(6);
        await sb.put(`m.${fmt}`, bytes);
        const before = await sb.outsideSnapshot();
        const seen = new Map<string, number>();
        for (const m of mutants(bytes, PER_FORMAT, seed)) {
          const what = `${name} seed ${seed} mutant ${m.index} (${m.mutation} at ${m.at})`;
          const path = await sb.put(`m.${fmt}`, wrap ? wrap(m.bytes) : m.bytes);
          const scanned = await outcome(scanArchive({ path }), `scan ${what}`);
          await rm(sb.dest, { recursive: true, force: true });
          await mkdir(sb.dest, { recursive: true });
          const extracted = await outcome(extractArchive({ path }, sb.dest, { foldsCase: false }), `extract ${what}`);
          // Scan and extract apply the same rules to the same bytes: they must agree.
          expect(extracted, what).toBe(scanned);
          seen.set(scanned, (seen.get(scanned) ?? 0) + 1);
        }
        expect(await sb.outsideSnapshot()).toEqual(before);
        // The fuzzer really reached the parsers: both outcomes occur.
        if (someOk) expect(seen.get('ok') ?? 0, JSON.stringify([...seen])).toBeGreaterThan(0);
        expect(PER_FORMAT - (seen.get('ok') ?? 0), JSON.stringify([...seen])).toBeGreaterThan(PER_FORMAT / 4);
      },
      Math.max(30_000, PER_FORMAT * 25),
    );
  }
});
