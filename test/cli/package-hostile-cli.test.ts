import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sign } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock } from '../helpers/bin.js';
import { makeArchive, makePackage, FIXTURE_SITE } from '../helpers/make-package.js';
import { loadPrivateKey } from '../../src/package/keys.js';
import { MAX_MANIFEST_BYTES, readPackage } from '../../src/package/reader.js';
import { BLOCK } from '../../src/package/tar-header.js';
import { assemble, base256, membersOf, reseal, type Member } from '../package/craft.js';
import { treeDigest } from '../store/helpers.js';

/**
 * Through the built binary: hostile or mistaken packages exit 4 with a code and the
 * culprit named (never 1 / AIRLOCK_INTERNAL), print no terminal escapes, and leave the store as it was.
 */
let dir: string;
let key: string;
let good: string;
let store: string;
let n = 0;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-hostile-cli-'));
  key = join(dir, 'signer');
  expect(airlock(['keygen', '--out', key]).status).toBe(0);
  good = (await makePackage({ outDir: join(dir, 'good'), signKey: `${key}.key` })).pkgPath;
  store = join(dir, 'store');
  const i = airlock(['import', good, '--store', store, '--trust', `${key}.pub`, '--activate', '--no-precompress']);
  expect(i.status, i.stderr).toBe(0);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const pkg = () => join(dir, `bad-${++n}.airlock`);
/** A package with an edited manifest, re-signed with the trusted key (so the manifest checks run, not just the signature). */
async function resigned(edit: (text: string) => string): Promise<string> {
  const m = await membersOf(good);
  const data = Buffer.from(edit(m[0]!.data.toString()));
  const signer = await loadPrivateKey(`${key}.key`);
  const p = pkg();
  await assemble(p, [{ name: 'airlock.json', data }, { name: 'airlock.json.sig', data: sign(null, data, signer) }, m[2]!] as Member[]);
  return p;
}
const editJson = (f: (j: Record<string, unknown>) => void) => (text: string) => {
  const j = JSON.parse(text) as Record<string, unknown>;
  f(j);
  return JSON.stringify(j);
};

/** inspect, verify and import (against the populated store): exit 4, the code, no escape sequence printed, store unchanged. */
async function refusedEverywhere(p: string, code: string, subject: RegExp): Promise<void> {
  const before = await treeDigest(store);
  const runs = [
    airlock(['inspect', p, '--json']),
    airlock(['inspect', p]),
    airlock(['verify', p, '--trust', `${key}.pub`]),
    airlock(['import', p, '--store', store, '--trust', `${key}.pub`, '--no-precompress']),
  ];
  for (const r of runs) {
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toContain(`[${code}]`);
    expect(r.stderr).toMatch(subject);
    expect(r.stderr + r.stdout).not.toContain('\u001b');
    expect(r.stderr).not.toContain('AIRLOCK_INTERNAL');
  }
  expect(JSON.parse(runs[0]!.stdout)).toMatchObject({ ok: false, code, exitCode: 4 });
  expect(await treeDigest(store)).toBe(before);
}

describe('hostile packages through the binary', () => {
  it('base-256 tar size of 2^54 on airlock.json: exit 4 AIRLOCK_PACKAGE_HEADER naming the member (was exit 1, no code)', async () => {
    const bytes = await readFile(good);
    const h = Buffer.from(bytes.subarray(0, BLOCK));
    base256(2n ** 54n, 12).copy(h, 124);
    reseal(h).copy(bytes, 0);
    const p = pkg();
    await writeFile(p, bytes);
    await refusedEverywhere(p, 'AIRLOCK_PACKAGE_HEADER', /package \S+bad-\d+\.airlock member "airlock\.json" at byte 0: the tar header's size field/);
    const pv = airlock(['preview', p, '--port', '0'], { timeoutMs: 20_000 });
    expect(pv.status, pv.stderr).toBe(4);
    expect(pv.stderr).toContain('[AIRLOCK_PACKAGE_HEADER]');
  });

  it('base-256 size on the bundle member too', async () => {
    const bytes = await readFile(good);
    const at = (await readPackage(good)).archive.offset - BLOCK;
    const h = Buffer.from(bytes.subarray(at, at + BLOCK));
    base256(2n ** 60n, 12).copy(h, 124);
    reseal(h).copy(bytes, at);
    const p = pkg();
    await writeFile(p, bytes);
    await refusedEverywhere(p, 'AIRLOCK_PACKAGE_HEADER', /"bundle\.tar\.gz"/);
  });

  it('stack exhaustion: inspect --json of a manifest nested 20,000 deep exits 4 naming airlock.json (was a stack overflow, exit 1)', async () => {
    const p = await resigned((t) => t.trimEnd().slice(0, -1) + ',"x":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}');
    await refusedEverywhere(p, 'AIRLOCK_BAD_MANIFEST', /airlock\.json nests deeper than 64 levels/);
  });

  it('a signed manifest padded with whitespace to one byte over the manifest size bound: verify and import exit 4 AIRLOCK_BAD_MANIFEST naming airlock.json and both sizes, from its header, before a byte of it is read; the store is unchanged', async () => {
    const over = MAX_MANIFEST_BYTES + 1;
    const m = await membersOf(good);
    const data = Buffer.alloc(over, 0x20);
    m[0]!.data.copy(data);
    const p = pkg();
    await assemble(p, [
      { name: 'airlock.json', data },
      { name: 'airlock.json.sig', data: sign(null, data, await loadPrivateKey(`${key}.key`)) },
      m[2]!,
    ] as Member[]);
    expect((await stat(p)).size).toBeGreaterThan(over);
    const before = await treeDigest(store);
    for (const r of [airlock(['verify', p, '--trust', `${key}.pub`]), airlock(['import', p, '--store', store, '--trust', `${key}.pub`, '--no-precompress'])]) {
      expect(r.status, r.stderr).toBe(4);
      expect(r.stderr).toContain(`airlock.json is ${over} bytes (limit ${MAX_MANIFEST_BYTES}) [AIRLOCK_BAD_MANIFEST]`);
    }
    expect(await treeDigest(store)).toBe(before);
  }, 60_000);

  it('declared file sizes of 2^52 bytes: verify and import exit 4 AIRLOCK_TOO_LARGE before any space check (was NO_SPACE for 17 PB)', async () => {
    const p = await resigned(
      editJson((j) => {
        for (const f of j.files as { size: number }[]) f.size = 2 ** 52;
      }),
    );
    const before = await treeDigest(store);
    for (const r of [airlock(['verify', p, '--trust', `${key}.pub`]), airlock(['import', p, '--store', store, '--trust', `${key}.pub`])]) {
      expect(r.status, r.stderr).toBe(4);
      expect(r.stderr).toMatch(/airlock\.json declares more than 21474836480 bytes of files .*\[AIRLOCK_TOO_LARGE\]/);
      expect(r.stderr).not.toMatch(/NO_SPACE|PB|MB available/);
    }
    expect(await treeDigest(store)).toBe(before);
  });

  it('terminal escape injection: an OSC/CSI sequence in domain is refused at the edge and never reaches the terminal', async () => {
    const p = await resigned(
      editJson((j) => {
        j.domain = '\u001b]0;owned\u0007\u001b[2Jdocs.example.com';
      }),
    );
    await refusedEverywhere(p, 'AIRLOCK_BAD_MANIFEST', /domain: must be a host name/);
  });

  it.each([
    [
      'jobId',
      (j: Record<string, unknown>) => {
        j.jobId = 'se_1\u001b[31m';
      },
    ],
    [
      'files.0.path',
      (j: Record<string, unknown>) => {
        (j.files as { path: string }[])[0]!.path = 'red\u001b[31m.html';
      },
    ],
  ])('control characters in %s: exit 4, nothing printed raw', async (field, f) => {
    const p = await resigned(editJson(f));
    await refusedEverywhere(p, 'AIRLOCK_BAD_MANIFEST', new RegExp(field.replace(/\./g, '\\.')));
  });
});

describe('a raw export archive instead of a package (the most common mistake)', () => {
  it.each(['tar.gz', 'zip', 'tar'] as const)(
    '%s: inspect, verify and import exit 4 AIRLOCK_NOT_A_PACKAGE saying what to do; store unchanged',
    async (format) => {
      const a = join(dir, `export-${format}.${format === 'tar.gz' ? 'tgz' : format}`);
      await makeArchive(FIXTURE_SITE, format, a, true);
      await refusedEverywhere(
        a,
        'AIRLOCK_NOT_A_PACKAGE',
        new RegExp(`is an export archive \\(${format.replace('.', '\\.')}\\), not an \\.airlock package; turn it into one with \`airlock pack .* --domain D\``),
      );
    },
  );
});
