import type { TextChunk } from 'html-rewriter-wasm';

/**
 * See the WHOLE text of a raw-text element (`<script>`, `<style>`, `<noscript>`) while streaming.
 * lol-html hands text over in chunks, and always ends a text node with a chunk whose
 * `lastInTextNode` is true (also when the document ends inside the element), so the decision is
 * taken there — no end-tag callback, which keeps wasm↔JS crossings (the cost here) low.
 *
 * - observe: chunks pass through untouched; `onText` sees the whole text (to hash it).
 * - screen: chunks are held back; if `decide` keeps the text it is written again verbatim at the
 *   last chunk, otherwise the element is left EMPTY. An empty `<script>`/`<noscript>` is inert
 *   (HTML "prepare the script element" returns early on empty source text, before any CSP
 *   check), and keeping the tags keeps any id the page's code might look up.
 *
 * Raw-text elements cannot nest, so one pending text per rewriter suffices.
 */
export type Decide = (text: string) => boolean;
/** Screen or observe; a function decides from the first chunk (a payload prefix, say). */
export type ScreenMode = boolean | ((firstChunk: string) => boolean);

export class RawTextBuffer {
  private parts: string[] = [];
  private decide: Decide | null = null;
  private screening = false;
  private mode: ScreenMode = false;
  private first = true;
  private wrap: ((text: string) => string) | null = null;

  /** Call from the element handler; `screen` chooses the mode (see above). */
  begin(decide: Decide, screen: ScreenMode, wrap?: (text: string) => string): void {
    this.wrap = wrap ?? null;
    this.parts = [];
    this.decide = decide;
    this.mode = screen;
    this.first = true;
  }

  /**
   * Call from the text handler of the same selector. With `start`, a text-only handler (no
   * element callback: one wasm crossing fewer per element) begins the element itself.
   */
  text(chunk: TextChunk, start?: { decide: Decide; screen: ScreenMode }): void {
    if (this.decide === null && start) this.begin(start.decide, start.screen);
    if (this.decide === null) return;
    const t = chunk.text;
    if (this.first) {
      this.first = false;
      this.screening = typeof this.mode === 'function' ? this.mode(t) : this.mode;
    }
    if (t !== '') this.parts.push(t);
    if (!chunk.lastInTextNode) {
      if (this.screening) chunk.remove();
      return;
    }
    const text = this.parts.length === 1 ? this.parts[0]! : this.parts.join('');
    const keep = this.decide(text);
    const wrap = this.wrap;
    this.cancel();
    if (!this.screening) return;
    if (keep && text !== '') chunk.replace(wrap ? wrap(text) : text, { html: true });
    else chunk.remove();
  }

  /**
   * Forget a pending element (its end tag came with no text at all: `<script type=…></script>`).
   * With `wrap` (the element's tags were removed and are written back only around kept text), an
   * element whose text is dropped, or was empty, leaves nothing behind.
   */
  cancel(): void {
    this.decide = null;
    this.parts = [];
    this.wrap = null;
  }
}
