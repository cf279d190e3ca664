import { describe, expect, it } from 'vitest';
import { SearchIndex } from '../../src/search/engine.js';
import { extractPage, type ExtractedPage } from '../../src/search/extract.js';
import { rankByPassage, type PassageCandidate } from '../../src/search/passages.js';

const section = (heading: string, text: string) => ({ anchor: heading.toLowerCase(), heading, text });
const page = (id: number, sections: PassageCandidate['sections'], weight = 1): PassageCandidate => ({ id, title: `Page ${id}`, sections, weight });
const word = (terms: string[], idf = 1) => ({ terms, idf });

describe('a question ranks its candidate pages by their best section', () => {
  it('the page with one section holding the words beats a page with the words scattered over its sections', () => {
    const scattered = page(1, [section('One', 'free things'), section('Two', 'the system'), section('Three', 'memory use')]);
    const together = page(2, [section('Intro', 'nothing here'), section('freemem', 'the free system memory')]);
    const ranked = rankByPassage([scattered, together], [word(['free']), word(['system']), word(['memory'])], 20);
    expect(ranked.map((r) => r.id)).toEqual([2, 1]);
    expect(ranked[0]!.section.heading).toBe('freemem'); // the section the model is given
  });

  it('counts whole words only, in any case, a heading twice; a word is rarer the fewer sections hold it', () => {
    const w = [word(['count', 'counts'])];
    const score = (text: string, heading = 'h') => rankByPassage([page(1, [section(heading, text)])], w, 20)[0]?.score ?? 0;
    expect(score('counter account recount count_x')).toBe(0); // other words that contain it
    expect(score('Count COUNTS')).toBeCloseTo(score('count counts'));
    expect(score('x', 'count')).toBeGreaterThan(score('count'));
    const rare = rankByPassage([page(1, [section('h', 'count')])], [word(['count'], 3)], 20)[0]!.score;
    expect(rare).toBeCloseTo(3 * score('count'));
  });

  it('text in other scripts: NFKC and case as indexed, a CJK term inside a word', () => {
    const score = (text: string, terms: string[]) => rankByPassage([page(1, [section('h', text)])], [word(terms)], 20)[0]?.score ?? 0;
    expect(score('Ｃｏｕｎｔ é', ['count'])).toBeGreaterThan(0); // full-width letters
    expect(score('Zählen Straße', ['zählen'])).toBeGreaterThan(0);
    expect(score('Zählenx', ['zählen'])).toBe(0);
    expect(score('アクセストークンを構成します', ['トークン'])).toBeGreaterThan(0);
  });

  it('a page no word is in drops out; the page preference weighs; a tie keeps the candidates order', () => {
    const w = [word(['alpha'])];
    expect(rankByPassage([page(1, [section('h', 'beta')]), page(2, [section('h', 'alpha')])], w, 20).map((r) => r.id)).toEqual([2]);
    const same = [section('h', 'alpha')];
    expect(rankByPassage([page(1, same), page(2, same)], w, 20).map((r) => r.id)).toEqual([1, 2]);
    expect(rankByPassage([page(1, same, 0.5), page(2, same)], w, 20).map((r) => r.id)).toEqual([2, 1]);
    expect(rankByPassage([page(1, [])], w, 20)).toEqual([]);
  });
});

describe('SearchIndex: a question (anyWords) over a long reference page', () => {
  const filler = (i: number) => `<h2 id="s${i}">Topic ${i}</h2><p>${`lorem${i} ipsum${i} dolor${i} `.repeat(20)}</p>`;
  const html: Record<string, string> = {
    // the answer is one short section of a long page, which page-level BM25 weighs down for its length
    'api/os.html': `<title>OS</title><main>${Array.from({ length: 30 }, (_, i) => filler(i)).join('')}<h2 id="freemem">freemem()</h2><p>Returns the amount of free system memory in bytes.</p></main>`,
    'guide/memory.html': '<title>Guide</title><main><p>Memory is managed for you. Memory grows, memory shrinks, memory is reused by the system.</p></main>',
    'guide/other.html': '<title>Other</title><main><p>Nothing about it.</p></main>',
  };
  const pages: Record<string, ExtractedPage> = Object.fromEntries(Object.entries(html).map(([p, h]) => [p, extractPage(h)]));
  const text = async (file: string) => pages[file] ?? null;
  const idx = SearchIndex.build(Object.entries(pages).map(([path, p]) => ({ path, page: p })));

  it('finds the page by the section that answers, and gives that section', async () => {
    const hits = await idx.query('free system memory', text, { anyWords: true, pageSize: 5, sectionChars: 1000 });
    expect(hits.map((h) => h.path)).toEqual(['/api/os#freemem', '/guide/memory']);
    expect(hits[0]!.text).toBe('Returns the amount of free system memory in bytes.');
    // the reader's search box still ranks pages as pages
    expect((await idx.query('system memory', text))[0]!.metadata.page).toBe('/guide/memory');
  });

  it("an unreadable page drops out of a question's answer; when no page can be read, the page order stands", async () => {
    const noOs = async (file: string) => (file === 'api/os.html' ? null : pages[file]!);
    expect((await idx.query('free system memory', noOs, { anyWords: true })).map((h) => h.metadata.page)).toEqual(['/guide/memory']);
    const none = await idx.query('free system memory', async () => null, { anyWords: true, pageSize: 2 });
    expect(none.map((h) => h.metadata.page)).toHaveLength(2);
  });
});
