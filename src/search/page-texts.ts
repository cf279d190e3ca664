import type { ExtractedPage } from './extract.js';

/**
 * The extracted text of pages a search worker read for its hits (engine.ts's PageText), kept
 * for the next queries: a reader typing in the search dialog asks for much the same pages at each
 * key, and the local assistant's questions come back to a site's popular pages. Extracting a
 * large reference page again costs tens of milliseconds (bench/search-real.ts measures queries
 * with their snippets). Bounded by characters held (least recently used let go first); a page
 * larger than a quarter of the bound is never kept. Concurrent reads of one page share one
 * extraction. Entries are per index key, dropped with their index.
 */
export class PageTexts {
  private readonly map = new Map<string, { page: ExtractedPage; chars: number }>();
  private readonly pending = new Map<string, Promise<ExtractedPage>>();
  private chars = 0;
  /** Counts drops: a read that finishes after a drop is not kept (it may belong to the dropped index). */
  private drops = 0;

  constructor(private readonly maxChars: number) {}

  get size(): number {
    return this.chars;
  }

  async get(key: string, file: string, load: () => Promise<ExtractedPage>): Promise<ExtractedPage> {
    const id = `${key}\0${file}`;
    const hit = this.map.get(id);
    if (hit) {
      this.map.delete(id); // most recently used last
      this.map.set(id, hit);
      return hit.page;
    }
    const waiting = this.pending.get(id);
    if (waiting) return waiting;
    const p = load().finally(() => this.pending.delete(id));
    this.pending.set(id, p);
    const drops = this.drops;
    const page = await p;
    if (drops === this.drops) this.keep(id, page);
    return page;
  }

  /** Forget the pages of an index (its version no longer served, or let go). */
  drop(key: string): void {
    this.drops++;
    const prefix = `${key}\0`;
    for (const [id, e] of this.map)
      if (id.startsWith(prefix)) {
        this.map.delete(id);
        this.chars -= e.chars;
      }
  }

  private keep(id: string, page: ExtractedPage): void {
    const chars = page.title.length + page.sections.reduce((n, s) => n + s.heading.length + s.text.length + (s.anchor?.length ?? 0), 0);
    if (chars > this.maxChars / 4 || this.map.has(id)) return;
    this.map.set(id, { page, chars });
    this.chars += chars;
    for (const [old, e] of this.map) {
      if (this.chars <= this.maxChars) break;
      this.map.delete(old);
      this.chars -= e.chars;
    }
  }
}
