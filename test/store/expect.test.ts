import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as tar from 'tar';
import { extractArchive, type EntryWatch } from '../../src/archive/index.js';
import { manifestWatch } from '../../src/store/expect.js';
import { makeTempDir } from './helpers.js';

const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const rec = (path: string, body: string) => ({ path, size: Buffer.byteLength(body), sha256: sha(body) });
const manifest = (files: ReturnType<typeof rec>[]) => ({ files, archive: { name: 'bundle.tar.gz' } }) as Parameters<typeof manifestWatch>[0];
const feed = (w: EntryWatch, path: string, body: string, claimed = Buffer.byteLength(body)) => {
  w.entry(path, claimed);
  w.done(path, claimed, sha(body));
};

describe('manifestWatch: entries held against the signed manifest as they are read', () => {
  it('accepts exactly the promised files, with or without a wrapping folder', () => {
    const m = manifest([rec('index.html', 'home'), rec('a/b.html', 'b')]);
    const plain = manifestWatch(m);
    feed(plain, 'a/b.html', 'b');
    feed(plain, 'index.html', 'home');
    const wrapped = manifestWatch(m);
    feed(wrapped, 'site/index.html', 'home');
    feed(wrapped, 'site/a/b.html', 'b');
  });

  it('keeps both readings while an entry fits both, and drops the one a later entry contradicts', () => {
    // "a/index.html" is both the promised a/index.html and (wrapped in a/) the promised index.html.
    const m = manifest([rec('index.html', 'x'), rec('a/index.html', 'x'), rec('b.html', 'b')]);
    const w = manifestWatch(m);
    feed(w, 'a/index.html', 'x');
    feed(w, 'b.html', 'b'); // only the unwrapped reading survives
    expect(() => feed(w, 'a/b.html', 'b')).toThrow(
      expect.objectContaining({ code: 'AIRLOCK_EXTRA_FILE', exitCode: 4, details: expect.objectContaining({ subject: 'a/b.html' }) }),
    );
  });

  it('an entry the manifest does not list is refused before any byte of it is read (AIRLOCK_EXTRA_FILE naming it)', () => {
    const w = manifestWatch(manifest([rec('index.html', 'home')]));
    expect(() => w.entry('evil.js', 10)).toThrow(
      expect.objectContaining({ code: 'AIRLOCK_EXTRA_FILE', message: 'evil.js is in bundle.tar.gz but not listed in the manifest' }),
    );
  });

  it('an entry larger (or smaller) than declared is refused from its header (AIRLOCK_SIZE_MISMATCH)', () => {
    const w = manifestWatch(manifest([rec('index.html', 'home')]));
    expect(() => w.entry('index.html', 5_000_000_000)).toThrow(
      expect.objectContaining({ code: 'AIRLOCK_SIZE_MISMATCH', exitCode: 4, details: expect.objectContaining({ subject: 'index.html', expected: 4 }) }),
    );
  });

  it('a digest that differs is refused as soon as the entry ends (AIRLOCK_DIGEST_MISMATCH naming the manifest path)', () => {
    const w = manifestWatch(manifest([rec('index.html', 'home')]));
    w.entry('site/index.html', 4);
    expect(() => w.done('site/index.html', 4, sha('HOME'))).toThrow(
      expect.objectContaining({ code: 'AIRLOCK_DIGEST_MISMATCH', details: expect.objectContaining({ subject: 'index.html' }) }),
    );
  });
});

describe('extraction with a manifest watch', () => {
  let dir: string;
  let archive: string;
  beforeAll(async () => {
    dir = await makeTempDir();
    const site = join(dir, 'site');
    await mkdir(join(site, 'p'), { recursive: true });
    await writeFile(join(site, 'index.html'), 'home');
    for (let i = 0; i < 500; i++) await writeFile(join(site, 'p', `${String(i).padStart(3, '0')}.html`), `page ${i}`);
    archive = join(dir, 'bundle.tar.gz');
    await tar.c({ file: archive, cwd: site, gzip: true, portable: true }, ['index.html', 'p']);
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('refuses the first unlisted entry at once: the rest of the archive is never written', async () => {
    const files = [rec('index.html', 'home'), ...Array.from({ length: 10 }, (_, i) => rec(`p/${String(i).padStart(3, '0')}.html`, `page ${i}`))];
    const watch = manifestWatch(manifest(files));
    let seen = 0;
    const counting: EntryWatch = {
      entry: (p, s) => {
        seen++;
        watch.entry(p, s);
      },
      done: watch.done,
    };
    const dest = join(dir, 'out-unlisted');
    await expect(extractArchive({ path: archive }, dest, { watch: counting })).rejects.toMatchObject({
      code: 'AIRLOCK_EXTRA_FILE',
      details: { subject: 'p/010.html' },
    });
    expect(seen).toBeLessThanOrEqual(13); // index.html, p/000..p/010 (a folder entry is not a file)
    const written = await readdir(dest, { recursive: true });
    expect(written.length).toBeLessThan(15);
  });

  it('after a late refusal nothing is written any more: the tree can be removed at once (was ENOTEMPTY)', async () => {
    const files = [rec('index.html', 'home'), ...Array.from({ length: 500 }, (_, i) => rec(`p/${String(i).padStart(3, '0')}.html`, `page ${i}`))];
    files[files.length - 1]!.sha256 = sha('not it');
    const dest = join(dir, 'out-late');
    await expect(extractArchive({ path: archive }, dest, { watch: manifestWatch(manifest(files)) })).rejects.toMatchObject({ code: 'AIRLOCK_DIGEST_MISMATCH' });
    const now = (await readdir(dest, { recursive: true })).length;
    await new Promise((r) => setTimeout(r, 100));
    expect((await readdir(dest, { recursive: true })).length).toBe(now); // no write landed after the rejection
    await rm(dest, { recursive: true }); // would throw ENOTEMPTY if a write were still in flight
  });

  it('an aborted signal stops the extraction between entries with its reason', async () => {
    const ac = new AbortController();
    const reason = new Error('stop');
    let n = 0;
    const watch: EntryWatch = {
      entry: () => {
        if (++n === 20) ac.abort(reason);
      },
      done: () => {},
    };
    const dest = join(dir, 'out-abort');
    await expect(extractArchive({ path: archive }, dest, { watch, signal: ac.signal })).rejects.toBe(reason);
    expect(n).toBeLessThanOrEqual(21);
    await rm(dest, { recursive: true });
  });
});
