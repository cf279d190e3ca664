import { describe, expect, it } from 'vitest';
import { SearchIndex, type QueryOptions } from '../../src/search/engine.js';
import { extractPage } from '../../src/search/extract.js';
import { pathTraits } from '../../src/search/rank.js';

function index(html: Record<string, string>): (q: string, o?: QueryOptions) => Promise<string[]> {
  const pages = Object.entries(html).map(([path, h]) => ({ path, page: extractPage(h) }));
  const idx = SearchIndex.build(pages);
  return async (q, o) => (await idx.query(q, async () => null, o)).map((h) => h.metadata.page);
}
const filler = (n: number, w = 'lorem ipsum dolor sit amet') => Array.from({ length: n }, () => w).join(' ');
const page = (title: string, body: string, lang?: string) =>
  `<html${lang ? ` lang="${lang}"` : ''}><title>${title}</title><main><h1>${title}</h1><p>${body}</p></main></html>`;

describe('search ranking', () => {
  it('the page whose title and file name are the query comes before pages that only use its words', async () => {
    const q = index({
      'sql-createtablespace.html': page('CREATE TABLESPACE', 'create a tablespace. ' + filler(20)),
      'sql-createtable.html': page('CREATE TABLE', 'define a new table. ' + filler(40)),
      'tutorial.html': page('Getting started', 'create table x; create table y; create table z. ' + filler(10)),
    });
    expect((await q('create table'))[0]).toBe('/sql-createtable');
  });

  it("the query's words joined name a file (data model → datamodel, pg_dump → pgdump, worker threads → worker_threads)", async () => {
    const q = index({
      'reference/datamodel.html': page('Data model — Docs', 'objects values types. ' + filler(30)),
      'library/pickle.html': page('pickle — Docs', 'the data of a model: data model data model data model. ' + filler(5)),
      'app-pgdump.html': page('pg_dump', 'extract a database into a script file. ' + filler(30)),
      'backup.html': page('Backup', 'use pg_dump; pg_dump is simple; pg_dump again. ' + filler(5)),
      'api/worker_threads.html': page('Worker threads', 'the node:worker_threads module. ' + filler(30)),
      'api/fs.html': page('File system', 'worker threads: worker pool threads worker threads. ' + filler(5)),
    });
    expect((await q('data model'))[0]).toBe('/reference/datamodel');
    expect((await q('pg_dump'))[0]).toBe('/app-pgdump');
    expect((await q('worker threads'))[0]).toBe('/api/worker_threads');
  });

  it('a listing page (nearly all link text) comes after the page it links to', async () => {
    const links = Array.from({ length: 40 }, (_, i) => `<li><a href="/p${i}">subprocess entry ${i}</a></li>`).join('');
    const q = index({
      'genindex-s.html': `<title>Index S</title><main><h1>Index</h1><ul>${links}</ul></main>`,
      'library/subprocess.html': page('subprocess — Subprocess management', 'run a program: subprocess.run. ' + filler(60)),
    });
    expect(await q('subprocess')).toEqual(['/library/subprocess', '/genindex-s']);
  });

  it('a contents page keeps its weight when its title or file name is what the reader typed; two neighbouring words name a file', async () => {
    const toc = (n: number, w: string) => Array.from({ length: n }, (_, i) => `<li><a href="/t${i}">${w} part ${i}</a></li>`).join('');
    const q = index({
      'textsearch.html': `<title>Chapter 12. Full Text Search</title><main><h1>Full Text Search</h1><ul>${toc(12, 'text search')}</ul></main>`,
      'textsearch-intro.html': page('Introduction', 'full text search finds documents; text search text search full text. ' + filler(20)),
      'plpgsql.html': `<title>Chapter 43. PL/pgSQL</title><main><h1>PL/pgSQL</h1><p>plpgsql is a loadable language.</p><ul>${toc(12, 'statements')}</ul></main>`,
      'plpgsql-porting.html': page('Porting from Oracle PL/SQL', 'plpgsql plpgsql plpgsql porting. ' + filler(20)),
    });
    expect((await q('full text search'))[0]).toBe('/textsearch');
    expect((await q('plpgsql'))[0]).toBe('/plpgsql');
  });

  it('copies of a page under versions collapse into one: the current version, else the unversioned, else latest', async () => {
    const body = 'gather awaitables concurrently. ' + filler(10);
    const q = index({
      'dev/library/asyncio-task.html': page('Coroutines', body),
      'latest/library/asyncio-task.html': page('Coroutines', body),
      'library/asyncio-task.html': page('Coroutines', body),
      'dev/library/other.html': page('Other', filler(5)),
    });
    expect(await q('gather')).toEqual(['/library/asyncio-task']);
    expect(await q('gather', { page: '/dev/library/other' })).toEqual(['/dev/library/asyncio-task']);
    const noRoot = index({ 'dev/x.html': page('X', body), 'latest/x.html': page('X', body), '2.0/x.html': page('X', body) });
    expect(await noRoot('gather')).toEqual(['/latest/x']);
  });

  it("copies of a page in other languages collapse into the reader's: asked for, the current page's, the query's script, the site's default", async () => {
    const q = index({
      'index.html': page('Handbook', filler(5), 'en'),
      'guide/handoffs.html': page('Handoffs', 'handoffs pass control to another agent. ' + filler(10), 'en'),
      'ja/guide/handoffs.html': page('ハンドオフ', 'handoffs はエージェントに制御を渡します。', 'ja'),
      'zh/guide/handoffs.html': page('交接', 'handoffs 将控制权交给另一个代理。', 'zh'),
      'ja/index.html': page('ハンドブック', 'ようこそ', 'ja'),
    });
    expect(await q('handoffs')).toEqual(['/guide/handoffs']);
    expect(await q('handoffs', { language: 'zh-CN' })).toEqual(['/zh/guide/handoffs']);
    expect(await q('handoffs', { page: '/ja/index.html' })).toEqual(['/ja/guide/handoffs']);
    expect((await q('ハンドオフ'))[0]).toBe('/ja/guide/handoffs');
  });

  it('without a stated language, a query in Latin letters prefers the copy not in a CJK language (x.ja.html naming)', async () => {
    const q = index({
      'ch02.ja.html': page('第2章 パッケージ管理', 'aptitude aptitude aptitude を使います。'),
      'ch02.en.html': page('Chapter 2. Package management', 'use aptitude. ' + filler(20)),
      'ch02.zh-cn.html': page('第 2 章 软件包管理', 'aptitude aptitude aptitude 软件包'),
    });
    expect(await q('aptitude')).toEqual(['/ch02.en']);
    expect(await q('パッケージ管理')).toEqual(['/ch02.ja']);
  });

  it('a prefix completion or typo neighbour never outweighs the word typed', async () => {
    const q = index({
      'rare.html': page('Rare', 'optionsobjectspecial appears here once. ' + filler(10)),
      'cli.html': page('Command-line API', 'command line options options. ' + filler(10)),
      'a.html': page('A', 'options. ' + filler(10)),
      'b.html': page('B', 'options. ' + filler(10)),
    });
    expect((await q('options'))[0]).toBe('/cli');
  });

  it('path traits: versions, locales and the copy key', () => {
    expect(pathTraits('/latest/ja/guide/x')).toEqual({ key: 'guide/x', lang: 'ja', version: 'latest', name: 'x' });
    expect(pathTraits('/ch02.zh-cn')).toEqual({ key: 'ch02', lang: 'zh-cn', version: null, name: 'ch02' });
    expect(pathTraits('/3.11/library/')).toEqual({ key: 'library/', lang: null, version: '3.11', name: 'library' });
    expect(pathTraits('/whatsnew/3.11')).toMatchObject({ key: 'whatsnew/3.11', version: null });
  });
});
