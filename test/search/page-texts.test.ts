import { describe, expect, it } from 'vitest';
import { PageTexts } from '../../src/search/page-texts.js';
import type { ExtractedPage } from '../../src/search/extract.js';

const page = (text: string): ExtractedPage => ({ title: '', sections: [{ anchor: null, heading: '', text }] });

describe('PageTexts: extracted pages kept for the next queries', () => {
  it('reads a page once for repeated and concurrent asks', async () => {
    const texts = new PageTexts(1000);
    let loads = 0;
    const load = async () => (loads++, page('hello'));
    const [a, b] = await Promise.all([texts.get('v1', 'a.html', load), texts.get('v1', 'a.html', load)]);
    expect(await texts.get('v1', 'a.html', load)).toBe(a);
    expect([loads, a === b, texts.size]).toEqual([1, true, 5]);
  });

  it('keeps at most its bound of characters, letting the least recently used go; a page over a quarter of it is never kept', async () => {
    const texts = new PageTexts(100);
    let loads = 0;
    const load = (n: number) => async () => (loads++, page('x'.repeat(n)));
    await texts.get('v1', 'a', load(25));
    await texts.get('v1', 'b', load(25));
    await texts.get('v1', 'c', load(25));
    await texts.get('v1', 'a', load(25)); // a used again: b is now the least recent
    await texts.get('v1', 'd', load(25));
    await texts.get('v1', 'e', load(25)); // over 100: b goes
    expect([texts.size, loads]).toEqual([100, 5]);
    await texts.get('v1', 'a', load(25));
    expect(loads).toBe(5);
    await texts.get('v1', 'b', load(25));
    expect(loads).toBe(6);
    await texts.get('v1', 'big', load(26));
    await texts.get('v1', 'big', load(26));
    expect(loads).toBe(8);
  });

  it("drop(key) forgets that index's pages only; a failed read is not kept", async () => {
    const texts = new PageTexts(1000);
    let loads = 0;
    const load = async () => (loads++, page('abc'));
    await texts.get('v1', 'a', load);
    await texts.get('v2', 'a', load);
    texts.drop('v1');
    await texts.get('v2', 'a', load);
    await texts.get('v1', 'a', load);
    expect([loads, texts.size]).toEqual([3, 6]);
    // a read still under way when its index is dropped is not kept
    let finish = (_: ExtractedPage) => {};
    const slow = texts.get('v4', 'a', () => new Promise<ExtractedPage>((r) => (finish = r)));
    texts.drop('v4');
    finish(page('late'));
    await slow;
    expect(texts.size).toBe(6);
    await expect(texts.get('v3', 'gone', async () => Promise.reject(new Error('ENOENT')))).rejects.toThrow('ENOENT');
    expect(await texts.get('v3', 'gone', load)).toEqual(page('abc'));
  });
});
