import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { checkJsonBounds } from '../../src/package/json-bounds.js';
import { checkManifestLimits } from '../../src/package/limits.js';
import { MANIFEST_BOUNDS, parseManifest, serializeManifest, type Manifest } from '../../src/package/manifest.js';

/** The manifest is bounded before parsing, its strings validated at the edge, its declared sizes held to the archive limits. */
const good = (): Manifest => ({
  format: 'airlock-package/1',
  domain: 'docs.example.com',
  version: 'v1',
  jobId: 'se_3f9a2c1b8e7d4a06',
  createdAt: '2025-01-15T12:00:00.000Z',
  pageCount: 1,
  archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: 10, sha256: 'a'.repeat(64) },
  files: [{ path: 'index.html', size: 3, sha256: 'b'.repeat(64) }],
});
const bytesOf = (m: unknown) => Buffer.from(JSON.stringify(m));
const refused = (code: string, message?: RegExp) =>
  expect.objectContaining({
    exitCode: 4,
    code,
    details: expect.objectContaining({ subject: 'airlock.json' }),
    ...(message ? { message: expect.stringMatching(message) } : {}),
  });

describe('checkJsonBounds (before JSON.parse)', () => {
  const bounds = { maxBytes: 1000, maxDepth: 4 };
  it('counts depth outside strings only: brackets and escaped quotes inside strings do not count', () => {
    expect(() => checkJsonBounds(Buffer.from('[[[["x"]]]]'), bounds, 'airlock.json')).not.toThrow();
    expect(() => checkJsonBounds(Buffer.from('[[[["[[[[\\"[[[[{{{{"]]]]'), bounds, 'airlock.json')).not.toThrow();
    expect(() => checkJsonBounds(Buffer.from('[[[[["x"]]]]]'), bounds, 'airlock.json')).toThrow(refused('AIRLOCK_BAD_MANIFEST', /nests deeper than 4 levels/));
    expect(() => checkJsonBounds(Buffer.from('{"a":{"b":[{"c":[1]}]}}'), bounds, 'airlock.json')).toThrow(/deeper/);
  });
  it('refuses more bytes than the limit without looking at them', () => {
    expect(() => checkJsonBounds(Buffer.alloc(1001, 0x20), bounds, 'airlock.json')).toThrow(
      refused('AIRLOCK_BAD_MANIFEST', /1001 bytes, more than the limit of 1000/),
    );
  });
});

describe('parseManifest bounds', () => {
  it('stack exhaustion: a manifest nested 20,000 deep is refused before parsing (exit 4, naming airlock.json)', () => {
    const text = JSON.stringify(good()).slice(0, -1) + ',"x":' + '['.repeat(20_000) + ']'.repeat(20_000) + '}';
    expect(() => parseManifest(Buffer.from(text))).toThrow(refused('AIRLOCK_BAD_MANIFEST', /nests deeper than 64 levels/));
  });
  it('a 200,000-file manifest (the default maxFiles) with long paths passes the bounds and the schema', () => {
    const m = good();
    m.files = Array.from({ length: 200_000 }, (_, i) => ({
      path: `docs/section-${i % 97}/a-rather-long-page-name-for-a-real-site-${i}/index.html`,
      size: i,
      sha256: createHash('sha256').update(String(i)).digest('hex'),
    }));
    const bytes = serializeManifest(m);
    expect(bytes.length).toBeGreaterThan(40e6);
    expect(bytes.length).toBeLessThan(MANIFEST_BOUNDS.maxBytes / 2);
    expect(parseManifest(bytes).files).toHaveLength(200_000);
  });
  it('a schema failure in millions of entries names the first few, not all', () => {
    const m = good() as unknown as { files: unknown[] };
    m.files = Array.from({ length: 10_000 }, () => ({ path: 'a', size: -1, sha256: 'x' }));
    try {
      parseManifest(bytesOf(m));
      expect.unreachable();
    } catch (err) {
      expect((err as Error).message.length).toBeLessThan(1000);
      expect((err as Error).message).toMatch(/and 19995 more/);
    }
  });
});

describe('manifest strings validated at the edge (nothing a terminal would obey)', () => {
  const edit = (f: (m: Record<string, unknown>) => void) => {
    const m = good() as unknown as Record<string, unknown>;
    f(m);
    return bytesOf(m);
  };
  it.each([
    ['domain', 'docs.example.com\u001b]0;pwned\u0007'],
    ['domain', '\u001b[2J\u001b[Hdocs.example.com'],
    ['domain', 'docs.example.com/../x'],
    ['domain', 'docs example.com'],
    ['domain', 'docs.example.com:8080'],
    ['domain', ''],
    ['domain', 'a'.repeat(64) + '.com'],
    ['jobId', 'se_1\u001b[31m'],
    ['jobId', 'se_1\u009b31m'],
    ['jobId', 'x'.repeat(257)],
    ['version', 'v1\u001b[0m'],
  ])('terminal escape injection: %s %j is refused (exit 4)', (field, value) => {
    expect(() =>
      parseManifest(
        edit((m) => {
          m[field] = value;
        }),
      ),
    ).toThrow(refused('AIRLOCK_BAD_MANIFEST', new RegExp(`^airlock\\.json is not a valid .*${field}`)));
  });
  it.each([
    '../etc/passwd',
    '/etc/passwd',
    'a/../../b',
    'C:evil.html',
    'a\\b.html',
    'a\u0000b',
    'red\u001b[31m.html',
    'a\nb.html',
    './index.html',
    'a//b.html',
    'dir/',
    '',
  ])('a file path the archive reader could never produce (%j) is refused', (path) => {
    expect(() =>
      parseManifest(
        edit((m) => {
          (m.files as { path: string }[])[0]!.path = path;
        }),
      ),
    ).toThrow(refused('AIRLOCK_BAD_MANIFEST', /files\.0\.path/));
  });
  it('real-world names pass: spaces, Unicode, case pairs, folders named like pages', () => {
    for (const path of ['docs/a b.html', 'docs/日本語/index.html', 'rules/A001/index.html', 'docs/intro.html/index.html', '.well-known/x']) {
      expect(
        parseManifest(
          edit((m) => {
            (m.files as { path: string }[])[0]!.path = path;
          }),
        ).files[0]!.path,
      ).toBe(path);
    }
  });
  it('the bad string itself is not echoed into the message', () => {
    expect(() =>
      parseManifest(
        edit((m) => {
          m.domain = '\u001b]0;pwned\u0007';
        }),
      ),
    ).toThrow(expect.objectContaining({ message: expect.not.stringContaining('\u001b') }));
  });
});

describe('checkManifestLimits', () => {
  const files = (n: number, size: number) => Array.from({ length: n }, (_, i) => ({ path: `p${i}.html`, size, sha256: 'b'.repeat(64) }));
  it('declared sizes of 2^52 bytes are beyond the expanded-size limit: exit 4 AIRLOCK_TOO_LARGE naming airlock.json', () => {
    expect(() => checkManifestLimits({ files: files(2, 2 ** 52) })).toThrow(refused('AIRLOCK_TOO_LARGE', /declares more than 21474836480 bytes/));
    expect(() => checkManifestLimits({ files: files(4, Number.MAX_SAFE_INTEGER) })).toThrow(refused('AIRLOCK_TOO_LARGE'));
  });
  it('more files than maxFiles: exit 4 AIRLOCK_TOO_MANY_FILES', () => {
    expect(() => checkManifestLimits({ files: files(11, 1) }, { maxFiles: 10 })).toThrow(
      refused('AIRLOCK_TOO_MANY_FILES', /lists 11 files, more than the limit of 10/),
    );
  });
  it('exactly at the limits passes', () => {
    expect(() => checkManifestLimits({ files: files(10, 100) }, { maxFiles: 10, maxExpandedBytes: 1000 })).not.toThrow();
    expect(() => checkManifestLimits({ files: files(10, 100) }, { maxFiles: 10, maxExpandedBytes: 999 })).toThrow(refused('AIRLOCK_TOO_LARGE'));
  });
});
