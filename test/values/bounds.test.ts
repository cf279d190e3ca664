import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadValues } from '../../src/values/index.js';
import { AirlockError } from '../../src/errors.js';
import { airlockAsync } from '../helpers/bin.js';
import { jsonMutants, mutants, toJson } from '../helpers/mutate.js';
import { parse } from 'yaml';

/**
 * `serve --values` with more than 100 YAML aliases exited 1 with no code; 200,000
 * keys were still parsing after 120 s (a quadratic duplicate check); a 50 MB scalar peaked at
 * 1.8 GB. Now every bad values file is exit 2 naming the file, the key path or the limit, in
 * linear time, and the file's size is checked before it is read.
 */
let dir: string;
let n = 0;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-values-bounds-'));
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

async function file(text: string | Buffer): Promise<string> {
  const p = join(dir, `v${++n}.yaml`);
  await writeFile(p, text);
  return p;
}

/** What serve says about a values file: usage errors stop it before any store or port is touched. */
async function serveWith(text: string | Buffer, extra: string[] = [], timeoutMs = 60_000) {
  const p = await file(text);
  return { path: p, ...(await airlockAsync(['serve', '--values', p, '--store', join(dir, 'no-store'), ...extra], { timeoutMs })) };
}

const VALID = `# a values file as a chart would have it
staticExport:
  enabled: true
  bundleUrl: https://bucket.example.com/exports/bundle.tar.gz?X-Sig=abc
  version: v1
  domain: docs.example.com
  trust: [keys/signer.pub]
  allowUnsigned: false
deployment:
  type: air-gapped
features:
  search: false
  api-playground: true
store: /srv/airlock
port: 8080
host: 0.0.0.0
mirror:
  enabled: false
  tokensFile: tokens.txt
  linkTtlSeconds: 900
`;

describe('values file bounds (through the binary)', () => {
  it('billion laughs: exit 2 AIRLOCK_BAD_VALUES naming the alias budget, at once', async () => {
    const lol = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (let i = 1; i < 10; i++)
      lol.push(
        `${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(9)
          .fill('*' + String.fromCharCode(96 + i))
          .join(',')}]`,
      );
    const t0 = performance.now();
    const r = await serveWith(lol.join('\n') + '\n');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(
      new RegExp(
        `values file ${r.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} refused: its 81 aliases expand to 4,412,961,486 more nodes, more than 10,000 \\(an alias bomb\\?\\)`,
      ),
    );
    expect(r.stderr).toContain('[AIRLOCK_BAD_VALUES]');
    expect(performance.now() - t0).toBeLessThan(10_000); // ~0.8 s, most of it Node's start
  });

  it('60,000 flat aliases in 240 KB (and 20,000 of a mapping): exit 2 naming the file and the count, in seconds (49 s and more before: each alias walked the whole document)', async () => {
    const flat = `base: &a 1\nlist: [${Array(60_000).fill('*a').join(', ')}]\n`;
    expect(flat.length).toBeLessThan(250_000);
    const many = ['base: &a {x: 1}', 'list:', ...Array.from({ length: 20_000 }, () => '  - *a')].join('\n') + '\n';
    // ~2 s each on an idle machine; the bound leaves room for a loaded one (before: over 90 s).
    const [a, b] = await Promise.all([serveWith(flat, [], 30_000), serveWith(many, [], 30_000)]);
    expect(a.status, a.stderr).toBe(2);
    expect(a.stderr).toContain(`values file ${a.path} refused: its 60,000 aliases expand to more than 10,000 nodes (an alias bomb?)`);
    expect(a.stderr).toContain('[AIRLOCK_BAD_VALUES]');
    expect(b.status, b.stderr).toBe(2);
    expect(b.stderr).toContain(`values file ${b.path} refused: its 20,000 aliases expand to more than 10,000 nodes`);
  }, 45_000);

  it('aliases inside anchored collections are counted as expanded: 100 aliases of a 200-node list are refused, the budget exactly met loads', async () => {
    const list = `[${Array(199).fill('1').join(', ')}]`; // 200 nodes with the list itself
    const over = await serveWith(`base: &b ${list}\nx: &x [${Array(50).fill('*b').join(', ')}]\ny: [*x, *x]\n`);
    expect(over.status).toBe(2);
    expect(over.stderr).toContain('its 52 aliases expand to 30,002 more nodes, more than 10,000');
    const at = await loadValues(await file(`base: &b ${list}\nx: [${Array(50).fill('*b').join(', ')}]\n`));
    expect(at.warnings).toEqual([expect.stringContaining('unknown key base'), expect.stringContaining('unknown key x')]);
  });

  it('a legitimate file with 150 aliases of one anchor loads (Helm reads it too)', async () => {
    const lines = ['common: &c {search: false}', ...Array.from({ length: 150 }, (_, i) => `x${i}: *c`)];
    const v = await loadValues(await file(lines.join('\n') + '\n'));
    expect(v.warnings.length).toBeLessThanOrEqual(21); // unknown keys listed, bounded
    expect(v.warnings.at(-1)).toContain('more unknown keys (ignored)');
  });

  it('200,000 keys (~2 MB): refused on its size before reading; 70,000 distinct keys in 1 MiB load in linear time', async () => {
    const big = Array.from({ length: 200_000 }, (_, i) => `k${i}: ${i}`).join('\n');
    const r = await serveWith(big);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`values file \\S+ is ${Buffer.byteLength(big)} bytes, more than the limit of 1048576`));
    // Just under the limit, a duplicate at the very end: found (one pass), named with its line.
    const keys = Array.from({ length: 70_000 }, (_, i) => `k${i}: ${i}`);
    keys.push('k17: again');
    const d = await serveWith(keys.join('\n') + '\n');
    expect(d.status).toBe(2);
    expect(d.stderr).toContain(`:${keys.length}: duplicate key k17`);
  }, 60_000);

  it('a 50 MB scalar: refused on its size, nothing read', async () => {
    const r = await serveWith(Buffer.concat([Buffer.from('store: "'), Buffer.alloc(50 * 1024 * 1024, 'x'), Buffer.from('"\n')]));
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('more than the limit of 1048576');
  });

  it('deep nesting (flow and block, and through aliases), self-containing aliases, complex keys: exit 2 naming where', async () => {
    const flow = await serveWith('features: ' + '['.repeat(500_000) + '\n');
    expect(flow.status).toBe(2);
    expect(flow.stderr).toContain(':1 nests deeper than 64 levels');
    const block = await serveWith(Array.from({ length: 80 }, (_, i) => ' '.repeat(i) + `k${i}:`).join('\n') + ' 1\n');
    expect(block.status).toBe(2);
    expect(block.stderr).toContain('nests deeper than 64 levels');
    // 40 levels behind an alias, used 40 levels deep: 80 once followed.
    const inner = '{a: '.repeat(40) + '1' + '}'.repeat(40);
    const viaAlias = await serveWith(`base: &b ${inner}\nx: ${'{a: '.repeat(40)}*b${'}'.repeat(40)}\n`);
    expect(viaAlias.status).toBe(2);
    expect(viaAlias.stderr).toContain('x.a.a');
    const self = await serveWith('a: &a [1, *a]\n');
    expect(self.status).toBe(2);
    const complex = await serveWith('? [a, b]\n: 1\n');
    expect(complex.status).toBe(2);
    expect(complex.stderr).toContain('is not a plain value');
  });

  it('duplicate keys at any depth: exit 2 naming the key path and line', async () => {
    const r = await serveWith('staticExport:\n  enabled: true\n  version: v1\n  enabled: false\n');
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/:4: duplicate key staticExport\.enabled/);
  });

  it('not a regular file (a folder, /dev/zero): exit 2', async () => {
    for (const p of [dir, '/dev/zero']) {
      const r = await airlockAsync(['serve', '--values', p, '--store', join(dir, 'no-store')]);
      expect(r.status, p).toBe(2);
      expect(r.stderr).toMatch(/is a (folder|character device), not a regular file/);
    }
  });

  it('mutation fuzz: 16 mutants of a valid values file through serve, 4 at a time: always exit 2 (the file, or the flags after it), never 1', async () => {
    // --enable search under air-gapped is itself a usage error, so a mutant that still loads exits 2 too.
    const all = [...mutants(Buffer.from(VALID), 16, 0x7a1)];
    for (let at = 0; at < all.length; at += 4) {
      await Promise.all(
        all.slice(at, at + 4).map(async (m) => {
          const r = await serveWith(m.bytes, ['--deployment', 'air-gapped', '--enable', 'search']);
          expect(r.status, `mutant ${m.index} (${m.mutation} at ${m.at}): ${r.stderr}`).toBe(2);
          expect(r.stderr).not.toContain('AIRLOCK_INTERNAL');
        }),
      );
    }
  }, 60_000);
});

describe('values file mutation fuzz (in process)', () => {
  it('600 byte mutants: each loads or is refused with AIRLOCK_BAD_VALUES (exit 2) naming the file', async () => {
    const p = join(dir, 'fuzz.yaml');
    let refused = 0;
    for (const m of mutants(Buffer.from(VALID), 600, 0xfa11)) {
      await writeFile(p, m.bytes);
      const err = await loadValues(p).then(
        () => null,
        (e: unknown) => e,
      );
      if (err === null) continue;
      refused++;
      const what = `mutant ${m.index} (${m.mutation} at ${m.at}): ${String(err)}`;
      expect(err, what).toBeInstanceOf(AirlockError);
      expect((err as AirlockError).exitCode, what).toBe(2);
      expect((err as AirlockError).code, what).toBe('AIRLOCK_BAD_VALUES');
      expect((err as AirlockError).message, what).toContain(p);
    }
    expect(refused).toBeGreaterThan(30);
  }, 30_000);

  it('300 structural mutants (nulls, wrong types, huge strings, 5,000-deep arrays, control characters), as JSON (valid YAML): loaded or exit 2 naming the key path', async () => {
    const p = join(dir, 'fuzz-json.yaml');
    const base = parse(VALID) as unknown;
    for (const m of jsonMutants(base, 300, 0x5eed5)) {
      await writeFile(p, toJson(m.value));
      const err = await loadValues(p).then(
        () => null,
        (e: unknown) => e,
      );
      if (err === null) continue;
      const what = `${m.what}: ${String(err)}`;
      expect((err as AirlockError).exitCode, what).toBe(2);
      expect((err as AirlockError).code, what).toBe('AIRLOCK_BAD_VALUES');
      const leaf = m.what.split(' → ')[0]!;
      if (!m.what.startsWith('root') && !/deep/.test(m.what)) expect((err as AirlockError).message, what).toContain(leaf.split('.')[0]);
    }
  }, 30_000);
});
