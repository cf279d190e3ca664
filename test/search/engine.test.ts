import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { link, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SearchIndex, urlOfPage } from '../../src/search/engine.js';
import { snippet } from '../../src/search/snippet.js';
import { extractPage, type ExtractedPage } from '../../src/search/extract.js';
import { readSearchCache, writeSearchCache, SEARCH_CACHE_FORMAT, SEARCH_CACHE_NAME } from '../../src/search/cache-file.js';

const html: Record<string, string> = {
  'guide/webhooks.html':
    '<title>Webhooks</title><main><h1 id="top">Webhooks</h1><p>Receive events.</p><h2 id="verify">Verify signatures</h2><p>Check the HMAC signature of each delivery.</p><h2 id="retry">Retries</h2><p>Failed deliveries are retried with backoff.</p></main>',
  'guide/tokens.html': '<title>Access tokens</title><main><h1>Access tokens</h1><p>Rotate tokens every 90 days. Webhooks are unrelated.</p></main>',
  'ja/index.html': '<title>設定</title><main><h1 id="s">ローカライズ設定</h1><p>アクセストークンを構成します。</p></main>',
  'xss.html': '<title>Escapes</title><main><p>Use &lt;script&gt;alert(1)&lt;/script&gt; literally in snippets about escapes.</p></main>',
};
const pages: Record<string, ExtractedPage> = Object.fromEntries(Object.entries(html).map(([p, h]) => [p, extractPage(h)]));
const text = async (file: string) => pages[file] ?? null;
const idx = SearchIndex.build(Object.entries(pages).map(([path, page]) => ({ path, page })));
const digest = (s: string) => createHash('sha256').update(s).digest('hex');
/** The version's HTML files, as the loader is given them. */
const FILES = new Set(Object.keys(pages));
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('SearchIndex', () => {
  it('ranks the page whose title matches first and deep-links the section that holds the words', async () => {
    const hits = await idx.query('webhooks', text);
    expect(hits.map((h) => h.metadata.page)).toEqual(['/guide/webhooks', '/guide/tokens']);
    const sig = await idx.query('hmac signature', text);
    expect(sig[0]!.path).toBe('/guide/webhooks#verify');
    expect(sig[0]!.content).toBe('Check the <mark>HMAC</mark> <mark>signature</mark> of each delivery.');
  });

  it('a hit is placed in the section holding the word as typed, not an earlier one holding only its typo neighbour', async () => {
    const typo = {
      'typo.html': extractPage(
        '<title>T</title><main><h2 id="a">Intro</h2><p>It was taken offline.</p><h2 id="b">Daily</h2><p>Rotate the token daily.</p></main>',
      ),
    };
    const small = SearchIndex.build(Object.entries(typo).map(([path, page]) => ({ path, page })));
    const hits = await small.query('token', async (f) => typo[f as 'typo.html'] ?? null);
    expect(hits.map((h) => h.path)).toEqual(['/typo#b']);
    expect(hits[0]!.content).toBe('Rotate the <mark>token</mark> daily.');
  });

  it('a page holding the word as typed ranks before one holding only rarer typo neighbours, and a section headed by a neighbour loses to one holding the word', async () => {
    const src: Record<string, ExtractedPage> = {
      'near.html': extractPage('<title>A</title><main><p>Tokenx and tolken.</p></main>'),
      'one.html': extractPage('<title>B</title><main><h2 id="x">Taken care</h2><p>Nothing.</p><h2 id="y">Daily</h2><p>Rotate the token daily.</p></main>'),
      'two.html': extractPage('<title>C</title><main><p>A token expires.</p></main>'),
      'three.html': extractPage('<title>D</title><main><p>Each token is signed.</p></main>'),
    };
    const small = SearchIndex.build(Object.entries(src).map(([path, page]) => ({ path, page })));
    const hits = await small.query('token', async (f) => src[f] ?? null);
    expect(
      hits
        .slice(0, 3)
        .map((h) => h.metadata.page)
        .sort(),
    ).toEqual(['/one', '/three', '/two']);
    expect(hits.at(-1)!.metadata.page).toBe('/near'); // still found, after them
    expect(hits.find((h) => h.metadata.page === '/one')!.path).toBe('/one#y');
  });

  it('scoresOnly: the same pages in the same order, no page read, no section or snippet', async () => {
    let reads = 0;
    const counted = async (file: string) => (reads++, text(file));
    const full = await idx.query('hmac signature', counted);
    reads = 0;
    const bare = await idx.query('hmac signature', counted, { scoresOnly: true });
    expect(reads).toBe(0);
    expect(bare.map((h) => [h.metadata.page, h.metadata.score])).toEqual(full.map((h) => [h.metadata.page, h.metadata.score]));
    expect(bare[0]).toMatchObject({ content: '', path: '/guide/webhooks', metadata: { heading: '', anchor: null } });
  });

  it("sectionChars: each hit carries its best section's plain text, cut to the bound; not asked, no text", async () => {
    const [hit] = await idx.query('hmac signature', text, { sectionChars: 40 });
    expect(hit!.text).toBe('Check the HMAC signature of each deliver');
    expect((await idx.query('hmac signature', text))[0]).not.toHaveProperty('text');
  });

  it("anyWords: a question's words match their other English forms, in the text and in the title; a reader's search does not", async () => {
    const forms: Record<string, ExtractedPage> = {
      'copies.html': extractPage('<title>Copies of entries</title><main><p>Copies are kept for all entries.</p></main>'),
      'notes.html': extractPage('<title>Notes</title><main><p>A copy.</p></main>'),
    };
    const i = SearchIndex.build(Object.entries(forms).map(([path, page]) => ({ path, page })));
    const read = async (file: string) => forms[file] ?? null;
    expect((await i.query('copy entry', read, { anyWords: true })).map((h) => h.metadata.page)).toEqual(['/copies', '/notes']);
    // as typed into the search box: the words as written (the last one completed, a typo forgiven)
    expect((await i.query('copy entry', read)).map((h) => h.metadata.page)).toEqual(['/notes']);
  });

  it('prefix on the last word, typo tolerance, OR when AND finds nothing, filter by path', async () => {
    expect((await idx.query('retr', text))[0]!.path).toBe('/guide/webhooks#retry');
    expect((await idx.query('signatrue', text))[0]!.path).toBe('/guide/webhooks#verify');
    expect((await idx.query('rotate zzzzqqq', text))[0]!.metadata.page).toBe('/guide/tokens');
    expect(await idx.query('webhooks', text, { pathPrefix: '/ja/' })).toEqual([]);
    expect(await idx.query('   ', text)).toEqual([]);
  });

  it('finds Japanese by a word or a two-character part of one', async () => {
    expect((await idx.query('設定', text))[0]!.path).toBe('/ja/#s');
    expect((await idx.query('トー', text))[0]!.metadata.page).toBe('/ja/');
  });

  it('results carry no control character nor bidirectional override from a page, in title, heading or snippet', async () => {
    const evil = extractPage(
      '<title>quokka \u202egnp.exe\u001b[31m</title><main><h1>Quokka \u2066x\u2069</h1><p>quokka click here \u202e gnp.exe \u001b[31m red</p></main>',
    );
    const one = SearchIndex.build([{ path: 'evil.html', page: evil }]);
    const [h] = await one.query('quokka', async () => evil);
    // eslint-disable-next-line no-control-regex -- control characters are what must not be there
    expect(JSON.stringify(h)).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]|\\u00|\\u20/);
    expect(h!.metadata.title).toBe('quokka gnp.exe [31m');
    expect(h!.content).toContain('click here  gnp.exe  [31m red');
  });

  it('snippets are escaped text with <mark> only', async () => {
    const h = (await idx.query('script escapes', text))[0]!;
    expect(h.content).not.toContain('<script>');
    expect(h.content).toContain('&lt;<mark>script</mark>&gt;');
    expect(snippet('a <b> & "c"', ['b'])).toBe('a &lt;<mark>b</mark>&gt; &amp; &quot;c&quot;');
    expect(urlOfPage('index.html')).toBe('/');
    expect(urlOfPage('a/index.html')).toBe('/a/');
  });

  it('serializes to lines and back to the same answers; anything else is refused', async () => {
    const back = SearchIndex.deserialize([...idx.serializeLines()], FILES);
    expect(await back.query('hmac signature', text)).toEqual(await idx.query('hmac signature', text));
    // the sections' statistics too (a question's pages are ranked by their sections)
    expect(await back.query('how are requests signed', text, { anyWords: true })).toEqual(await idx.query('how are requests signed', text, { anyWords: true }));
    const lines = [...idx.serializeLines()];
    expect(() => SearchIndex.deserialize([], FILES)).toThrow();
    expect(() => SearchIndex.deserialize(['{}', '{}'], FILES)).toThrow();
    expect(() => SearchIndex.deserialize([JSON.stringify([{ path: 'no-slash', file: 'x', title: '' }]), lines[1]!], FILES)).toThrow(/page record/);
    expect(() => SearchIndex.deserialize(lines.slice(0, -1), FILES)).toThrow(/sectionDf/); // an array cut short
    const head = JSON.parse(lines[1]!) as Record<string, number>;
    expect(() => SearchIndex.deserialize([lines[0]!, JSON.stringify({ ...head, sections: 0 }), ...lines.slice(2)], FILES)).toThrow(
      /more sections than there are/,
    );
    expect(() => SearchIndex.deserialize([lines[0]!, JSON.stringify({ ...head, avgSectionLen: -1 }), ...lines.slice(2)], FILES)).toThrow(/header/);
    expect(() => SearchIndex.deserialize([lines[0]!, JSON.stringify({ ...head, postings: head.postings! + 1 }), ...lines.slice(2)], FILES)).toThrow();
    const terms = JSON.parse(lines[2]!) as string[];
    expect(() => SearchIndex.deserialize([lines[0]!, lines[1]!, JSON.stringify([...terms].reverse()), ...lines.slice(3)], FILES)).toThrow(/not sorted/);
  });

  it('a loaded index keeps nothing of a build: 50 loaded indexes hold well under 50 × the 1.7 MB of empty build buffers each once held', () => {
    const lines = [...idx.serializeLines()];
    const before = process.memoryUsage().arrayBuffers;
    const kept = Array.from({ length: 50 }, () => SearchIndex.deserialize(lines, FILES));
    expect(kept).toHaveLength(50);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(20 * 1024 * 1024);
  });

  it('a tampered cache file whose page record names a file outside the version (../../etc/passwd) is refused, never read', async () => {
    const lines = [...idx.serializeLines()];
    const records = JSON.parse(lines[0]!) as Array<Record<string, unknown>>;
    const withRecord = (r: Record<string, unknown>) => [JSON.stringify([r, ...records.slice(1)]), ...lines.slice(1)];
    for (const file of ['../../../../etc/passwd', '/etc/passwd', 'guide/../../x.html', 'not-in-the-version.html'])
      expect(() => SearchIndex.deserialize(withRecord({ ...records[0], file }), FILES)).toThrow(/names .*not a page of this version/);
    // a page of the version, but under another page's URL, or twice
    expect(() => SearchIndex.deserialize(withRecord({ ...records[0], path: '/elsewhere' }), FILES)).toThrow(/page record/);
    expect(() => SearchIndex.deserialize([JSON.stringify([records[0], records[0], ...records.slice(2)]), ...lines.slice(1)], FILES)).toThrow(
      /two page records name/,
    );
  });

  it('a tampered cache file is held to the limits extraction keeps: a 20 MB title, an odd language, a link share over 1', () => {
    const lines = [...idx.serializeLines()];
    const records = JSON.parse(lines[0]!) as Array<Record<string, unknown>>;
    const withRecord = (r: Record<string, unknown>) => [JSON.stringify([r, ...records.slice(1)]), ...lines.slice(1)];
    expect(() => SearchIndex.deserialize(withRecord({ ...records[0], title: 'T'.repeat(20_000_000) }), FILES)).toThrow(/page record/);
    expect(() => SearchIndex.deserialize(withRecord({ ...records[0], lang: '<script>' }), FILES)).toThrow(/page record/);
    expect(() => SearchIndex.deserialize(withRecord({ ...records[0], links: 1e308 }), FILES)).toThrow(/page record/);
    expect(SearchIndex.deserialize(withRecord({ ...records[0], lang: 'zh-Hant-TW', links: 0.5 }), FILES).size).toBe(records.length);
  });

  it('impossible statistics are refused: a term counted 0 times or more often than its page is long, postings out of order, lengths and means no page gives, a 20 MB term', () => {
    const lines = [...idx.serializeLines()];
    const at = (k: string) => lines.findIndex((l) => l.startsWith(`{"k":"${k}"`));
    const patched = (k: string, f: (b: Buffer) => void) => {
      const copy = [...lines];
      const b = Buffer.from((JSON.parse(copy[at(k)]!) as { b: string }).b, 'base64');
      f(b);
      copy[at(k)] = JSON.stringify({ k, b: b.toString('base64') });
      return copy;
    };
    expect(() =>
      SearchIndex.deserialize(
        patched('tfs', (b) => b.fill(0)),
        FILES,
      ),
    ).toThrow(/impossibly often/);
    expect(() =>
      SearchIndex.deserialize(
        patched('docLen', (b) => b.fill(0)),
        FILES,
      ),
    ).toThrow(/bad index header/); // its mean is not the header's
    expect(() =>
      SearchIndex.deserialize(
        patched('docLen', (b) => b.fill(0xff)),
        FILES,
      ),
    ).toThrow(/longer than any page can be/);
    // postings out of page order: the first term held by two pages, its two postings swapped
    const offsets = new Uint32Array(Uint8Array.from(Buffer.from((JSON.parse(lines[at('offsets')]!) as { b: string }).b, 'base64')).buffer);
    const t = offsets.findIndex((o, i) => i + 1 < offsets.length && offsets[i + 1]! - o >= 2);
    const swapped = patched('docs', (b) => {
      const [x, y] = [b.readUInt32LE(offsets[t]! * 4), b.readUInt32LE(offsets[t]! * 4 + 4)];
      b.writeUInt32LE(y, offsets[t]! * 4);
      b.writeUInt32LE(x, offsets[t]! * 4 + 4);
    });
    expect(() => SearchIndex.deserialize(swapped, FILES)).toThrow(/not in page order/);
    const head = JSON.parse(lines[1]!) as Record<string, number>;
    const withHead = (h: Record<string, number>) => [lines[0]!, JSON.stringify({ ...head, ...h }), ...lines.slice(2)];
    for (const h of [{ avgLen: 1e-300 }, { avgLen: 1e308 }, { sections: 2 ** 32 }, { avgSectionLen: 1e9 }] as Array<Record<string, number>>)
      expect(() => SearchIndex.deserialize(withHead(h), FILES), JSON.stringify(h)).toThrow(/bad index header/);
    const terms = JSON.parse(lines[2]!) as string[];
    const withTerms = (ts: string[]) => [lines[0]!, lines[1]!, JSON.stringify(ts), ...lines.slice(3)];
    expect(() => SearchIndex.deserialize(withTerms(['', ...terms.slice(1)]), FILES)).toThrow(/bad term/);
    expect(() => SearchIndex.deserialize(withTerms([...terms.slice(0, -1), 'z'.repeat(20_000_000)]), FILES)).toThrow(/bad term/);
  });

  it('a line that is not JSON is named in words, not with the parser text', () => {
    const lines = [...idx.serializeLines()];
    const head = lines[1]!.replace(/"avgLen":[^,]+/, '"avgLen":NaN');
    expect(() => SearchIndex.deserialize([lines[0]!, head, ...lines.slice(2)], FILES)).toThrow(/^the index header is not JSON$/);
    expect(() => SearchIndex.deserialize(['[{', ...lines.slice(1)], FILES)).toThrow(/^the line of page records is not JSON$/);
  });
});

describe('the cache file', () => {
  it('a page swapped for a symbolic link to a file outside the store, or for a FIFO, is not indexed nor read for a snippet, and never waited on', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-search-link-'));
    dirs.push(root);
    await writeFile(join(root, 'a.html'), '<title>Quokka</title><main><p>quokka facts</p></main>');
    await writeFile(join(root, 'secret.txt'), '<title>Secret</title><main><p>quokka secret</p></main>');
    await symlink(join(root, 'secret.txt'), join(root, 'b.html'));
    execFileSync('mkfifo', [join(root, 'c.html')]);
    const { loadOrBuild, readBounded } = await import('../../src/search/build.js');
    // b and c with the digest of the page they replaced: refused for what they are, not for their bytes
    const pages = ['a.html', 'b.html', 'c.html'].map((path) => ({ path, sha256: digest('<title>Quokka</title><main><p>quokka facts</p></main>') }));
    const r = await loadOrBuild({ siteDir: root, pages, cacheDir: null });
    expect(r.report.notes).toEqual([
      'b.html: not indexed (is a symbolic link (to "' + join(root, 'secret.txt') + '"), not a regular file: it is not followed)',
      'c.html: not indexed (is a FIFO (named pipe), not a regular file)',
    ]);
    expect((await r.index.query('quokka', async () => null)).map((h) => h.metadata.page)).toEqual(['/a']);
    await expect(readBounded(join(root, 'b.html'))).rejects.toThrow(/symbolic link/); // the reader of a hit's text, too
  });

  it('a page rewritten or hard-linked to another file (not the bytes the version was imported with) is not indexed nor read for a snippet; a page over the read bound is hashed whole', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-search-digest-'));
    dirs.push(root);
    const good = '<title>Quokka</title><main><p>quokka facts</p></main>';
    await writeFile(join(root, 'a.html'), good);
    await writeFile(join(root, 'outside.txt'), '<title>Secret</title><main><p>quokka secret</p></main>');
    await link(join(root, 'outside.txt'), join(root, 'b.html')); // a hard link: a regular file, other bytes
    const big = `<title>Big</title><main><p>quokka ${'x '.repeat(3 * 1024 * 1024)}</p></main>`; // 6 MB: more than is read
    await writeFile(join(root, 'c.html'), big);
    const { loadOrBuild, readBounded, MAX_PAGE_READ } = await import('../../src/search/build.js');
    expect(big.length).toBeGreaterThan(MAX_PAGE_READ);
    const pages = [
      { path: 'a.html', sha256: digest(good) },
      { path: 'b.html', sha256: digest(good) },
      { path: 'c.html', sha256: digest(big) },
    ];
    const r = await loadOrBuild({ siteDir: root, pages, cacheDir: null });
    expect(r.report.notes).toEqual(['b.html: not indexed (is not the page the version was imported with (its digest differs))']);
    expect((await r.index.query('quokka', async () => null)).map((h) => h.metadata.page).sort()).toEqual(['/a', '/c']);
    await expect(readBounded(join(root, 'b.html'), digest(good))).rejects.toThrow(/digest differs/);
    expect((await readBounded(join(root, 'c.html'), digest(big))).length).toBe(MAX_PAGE_READ);
    await writeFile(join(root, 'c.html'), big.slice(0, -1) + '!'); // its last byte, past the bound
    await expect(readBounded(join(root, 'c.html'), digest(big))).rejects.toThrow(/digest differs/);
  });

  it('a cache file re-checksummed after its page record was pointed at ../../etc/passwd is rebuilt from the pages, and no snippet quotes the outside file', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-search-slip-'));
    dirs.push(root);
    const site = join(root, 'site');
    await mkdir(site);
    await writeFile(join(site, 'a.html'), '<title>Quokka</title><main><p>quokka facts</p></main>');
    await writeFile(join(root, 'secret.txt'), 'root:x:0:0 quokka secret');
    const { loadOrBuild, indexKey } = await import('../../src/search/build.js');
    const input = {
      siteDir: site,
      pages: [{ path: 'a.html', sha256: digest('<title>Quokka</title><main><p>quokka facts</p></main>') }],
      cacheDir: join(root, 'search'),
    };
    const lines = [...SearchIndex.build([{ path: 'a.html', page: extractPage('<title>Quokka</title><main><p>quokka facts</p></main>') }]).serializeLines()];
    const records = JSON.parse(lines[0]!) as Array<Record<string, unknown>>;
    lines[0] = JSON.stringify([{ ...records[0], file: '../secret.txt' }]);
    await writeSearchCache(input.cacheDir, indexKey(input.pages), lines); // header, key and trailer all as the server writes them
    const r = await loadOrBuild(input);
    expect(r.report.from).toBe('built');
    expect(r.report.notes[0]).toMatch(/^cache file not used \(a page record names "\.\.\/secret\.txt", not a page of this version\); rebuilt$/);
    const read: string[] = [];
    const hits = await r.index.query('quokka', async (file) => (read.push(file), extractPage(await readFile(join(site, file)))));
    expect(read).toEqual(['a.html']);
    expect(hits[0]!.content).not.toContain('secret');
  });

  it('an index folder that cannot be written: the index is kept in memory, said in words (no errno, no temp path)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-search-ro-'));
    dirs.push(root);
    await writeFile(join(root, 'site.html'), '<title>Quokka</title><main><p>quokka</p></main>');
    await writeFile(join(root, 'not-a-folder'), '');
    const { loadOrBuild } = await import('../../src/search/build.js');
    const r = await loadOrBuild({
      siteDir: root,
      pages: [{ path: 'site.html', sha256: digest('<title>Quokka</title><main><p>quokka</p></main>') }],
      cacheDir: join(root, 'not-a-folder', 'search'),
    });
    expect(r.report.notes).toHaveLength(1);
    expect(r.report.notes[0]).toBe('cache file not written (a part of its path is not a folder); the index is kept in memory');
    expect(r.report.notes[0]).not.toMatch(/ENOTDIR|E[A-Z]{3,}|\.tmp|\//);
    expect((await r.index.query('quokka', async () => null)).length).toBe(1);
  });

  it('a cache file that is a link to itself is rebuilt, said in words (no ELOOP, no path)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-search-loop-'));
    dirs.push(root);
    await writeFile(join(root, 'a.html'), '<title>Quokka</title><main><p>quokka</p></main>');
    await mkdir(join(root, 'search'));
    await symlink(SEARCH_CACHE_NAME, join(root, 'search', SEARCH_CACHE_NAME));
    const { loadOrBuild } = await import('../../src/search/build.js');
    const r = await loadOrBuild({
      siteDir: root,
      pages: [{ path: 'a.html', sha256: digest('<title>Quokka</title><main><p>quokka</p></main>') }],
      cacheDir: join(root, 'search'),
    });
    expect(r.report.notes[0]).toBe('cache file not used (is a symbolic link (to "index.json"), not a regular file: it is not followed); rebuilt');
    expect(r.report.notes.join(' ')).not.toMatch(/ELOOP|E[A-Z]{3,}|\//);
  });

  it('a cache file that is a link to a good copy outside the store, or a FIFO, is not used (never followed, never waited on)', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-search-filelink-'));
    dirs.push(root);
    await writeSearchCache(join(root, 'outside'), 'k', ['["a"]', '{"b":1}']);
    await mkdir(join(root, 'search'));
    await symlink(join(root, 'outside', SEARCH_CACHE_NAME), join(root, 'search', SEARCH_CACHE_NAME));
    expect(await readSearchCache(join(root, 'outside'), 'k')).toMatchObject({ ok: true });
    expect(await readSearchCache(join(root, 'search'), 'k')).toMatchObject({
      ok: false,
      reason: expect.stringMatching(/^is a symbolic link .*it is not followed$/),
    });
    await rm(join(root, 'search', SEARCH_CACHE_NAME));
    execFileSync('mkfifo', [join(root, 'search', SEARCH_CACHE_NAME)]);
    expect(await readSearchCache(join(root, 'search'), 'k')).toEqual({ ok: false, reason: 'is a FIFO (named pipe), not a regular file' });
  });

  it('a link swapped in for the index folder or its version folder is never read nor written through', async () => {
    const root = await mkdtemp(join(tmpdir(), 'airlock-search-link-'));
    dirs.push(root);
    const outside = join(root, 'outside');
    await mkdir(outside);
    await writeFile(join(outside, SEARCH_CACHE_NAME), 'victim');
    await mkdir(join(root, 'versions', 'v1'), { recursive: true });
    await symlink(outside, join(root, 'versions', 'v1', 'search')); // the index folder is a link
    await expect(writeSearchCache(join(root, 'versions', 'v1', 'search'), 'k', ['["a"]'])).rejects.toThrow(
      /search is a symbolic link, which airlock never writes through/,
    );
    expect(await readSearchCache(join(root, 'versions', 'v1', 'search'), 'k')).toMatchObject({ ok: false, reason: expect.stringMatching(/symbolic link/) });
    await mkdir(join(outside, 'search'));
    await symlink(outside, join(root, 'versions', 'v2')); // the version folder is a link
    await expect(writeSearchCache(join(root, 'versions', 'v2', 'search'), 'k', ['["a"]'])).rejects.toThrow(/v2 is a symbolic link/);
    expect(await readFile(join(outside, SEARCH_CACHE_NAME), 'utf8')).toBe('victim');
    expect(await readdir(join(outside, 'search'))).toEqual([]);
  });

  it('round-trips, leaves no temp file, refuses a file over the bound, another key, and a damaged trailer', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-search-cache-'));
    dirs.push(dir);
    expect(await readSearchCache(dir, 'k')).toBeNull();
    await writeSearchCache(dir, 'k', ['["a"]', '{"b":1}']);
    expect(await readdir(dir)).toEqual([SEARCH_CACHE_NAME]);
    expect(await readSearchCache(dir, 'k')).toEqual({ ok: true, lines: ['["a"]', '{"b":1}'] });
    expect(await readSearchCache(dir, 'other')).toMatchObject({ ok: false, reason: expect.stringMatching(/other pages/) });
    expect(await readSearchCache(dir, 'k', 10)).toMatchObject({ ok: false, reason: expect.stringMatching(/more than the 10 allowed/) });
    const file = join(dir, SEARCH_CACHE_NAME);
    await writeFile(file, `{"format":"${SEARCH_CACHE_FORMAT}","key":"k"}\n["a"]\n{"end":true,"lines":1,"size":6,"sha256":"00"}\n`);
    expect(await readSearchCache(dir, 'k')).toMatchObject({ ok: false, reason: 'body digest does not match its trailer' });
    await writeFile(file, `{"format":"${SEARCH_CACHE_FORMAT}","key":"k"}\n["a"]\n`);
    expect(await readSearchCache(dir, 'k')).toMatchObject({ ok: false, reason: 'no trailer line' });
    await writeFile(file, 'not json\n');
    expect(await readSearchCache(dir, 'k')).toMatchObject({ ok: false, reason: 'header is not JSON' });
  });
});

describe('compact core', () => {
  it('within: bounded edit distance', async () => {
    const { within } = await import('../../src/search/typo.js');
    expect(within('webhooks', 'webhoks', 1)).toBe(true);
    expect(within('signature', 'signatrue', 1)).toBe(false); // a transposition is two edits
    expect(within('signature', 'signatrue', 2)).toBe(true);
    expect(within('abc', 'xyz', 2)).toBe(false);
  });

  it('a posting that names a page beyond the index is refused', () => {
    const lines = [...idx.serializeLines()];
    const docsAt = lines.findIndex((l) => l.startsWith('{"k":"docs"'));
    const v = JSON.parse(lines[docsAt]!) as { k: string; b: string };
    const b = Buffer.from(v.b, 'base64');
    b.writeUInt32LE(99, 0);
    lines[docsAt] = JSON.stringify({ k: 'docs', b: b.toString('base64') });
    expect(() => SearchIndex.deserialize(lines, FILES)).toThrow(/does not exist/);
  });
});

describe('result links', () => {
  it("a file name's own % stays a name: a folder named %2e%2e never links out of the site as ..", async () => {
    const evil: Record<string, ExtractedPage> = {
      '%2e%2e/other.example/guide.html': extractPage('<title>Beta guide (official)</title><main><p>turbine manual</p></main>'),
    };
    const i = SearchIndex.build(Object.entries(evil).map(([path, page]) => ({ path, page })));
    const hits = await i.query('turbine', async (f) => evil[f] ?? null);
    expect(hits[0]!.path).toBe('/%252e%252e/other.example/guide');
    expect(new URL(hits[0]!.path, 'http://x/site/').pathname).toBe('/%252e%252e/other.example/guide');
  });
});
