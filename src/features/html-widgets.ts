import type { Element, HTMLRewriter } from 'html-rewriter-wasm';
import { tally, type Tally } from './html-removal.js';

/**
 * Remove the elements of features that are off (widgets.ts `selectors`) from the page, content
 * and all. The streaming rewriter matches a subset of CSS (type, class, id, attribute selectors,
 * descendant and child combinators, :not, :nth-child); a configured selector outside it cannot be
 * matched while streaming and is only hidden by the injected style. Returns those selectors.
 */
export function addWidgetRemoval(rw: HTMLRewriter, selectors: readonly string[], removed: Tally): string[] {
  const unmatched: string[] = [];
  // Counted once per element, however many selectors match it.
  const remove = {
    element: (el: Element) => {
      if (el.removed) return;
      el.remove();
      tally(removed, 'widget');
    },
  };
  for (const sel of selectors) {
    try {
      rw.on(sel, remove);
    } catch {
      unmatched.push(sel);
    }
  }
  return unmatched;
}
