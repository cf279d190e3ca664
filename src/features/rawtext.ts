import type { DocumentEnd, Element, TextChunk } from 'html-rewriter-wasm';

/**
 * Decide about a raw-text element (`<script>`, `<style>`, `<noscript>`) from its WHOLE text while
 * streaming: lol-html hands the text over in chunks and emits the start tag before the text is
 * known, so the element's tags are taken out on entry (removeAndKeepContent), its chunks are held
 * back, and at its end tag the element is written again verbatim — or not at all.
 *
 * Raw-text elements cannot nest, so one buffer per rewriter suffices. An element cut off by the
 * end of the document (no end tag) is decided at document end (and closed), so no text is ever lost silently.
 */
export type Decide = (text: string, attrs: ReadonlyArray<[string, string]>) => boolean;

interface Pending {
  tag: string;
  attrs: Array<[string, string]>;
  text: string[];
  decide: Decide;
}

/** Attribute values from lol-html are raw source text, so only the quote needs escaping. */
function startTag(tag: string, attrs: ReadonlyArray<[string, string]>): string {
  return `<${tag}${attrs.map(([n, v]) => ` ${n}="${v.replace(/"/g, '&quot;')}"`).join('')}>`;
}

export class RawTextBuffer {
  private pending: Pending | null = null;

  /** Call from the element handler. */
  begin(el: Element, decide: Decide): void {
    const p: Pending = { tag: el.tagName, attrs: [...el.attributes], text: [], decide };
    this.pending = p;
    el.removeAndKeepContent();
    el.onEndTag((end) => {
      const html = this.finish(p);
      if (html !== null) end.before(html, { html: true });
    });
  }

  /** Call from the text handler of the same selector. */
  text(chunk: TextChunk): void {
    if (this.pending === null) return;
    this.pending.text.push(chunk.text);
    chunk.remove();
  }

  /** Call from the document end handler. */
  end(end: DocumentEnd): void {
    if (this.pending === null) return;
    const html = this.finish(this.pending);
    if (html !== null) end.append(html, { html: true });
  }

  private finish(p: Pending): string | null {
    if (this.pending === p) this.pending = null;
    const text = p.text.join('');
    if (!p.decide(text, p.attrs)) return null;
    return `${startTag(p.tag, p.attrs)}${text}</${p.tag}>`;
  }
}
