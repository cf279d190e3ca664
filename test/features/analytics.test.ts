import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { checkSelector, hideStyle, resolveFeatures, vendorForSnippet, vendorForUrl, widgetsFor } from '../../src/features/index.js';

describe('vendor table matching', () => {
  it('matches absolute, protocol-relative, upper-case and subdomain URLs of a vendor host', () => {
    expect(vendorForUrl('https://www.googletagmanager.com/gtag/js?id=G-1')?.id).toBe('google');
    expect(vendorForUrl('//www.google-analytics.com/analytics.js')?.id).toBe('google');
    expect(vendorForUrl(' HTTPS://CDN.SEGMENT.COM/analytics.js/v1/k/analytics.min.js ')?.id).toBe('segment');
    expect(vendorForUrl('https://us-assets.i.posthog.com/static/array.js')?.id).toBe('posthog');
    expect(vendorForUrl('/_vercel/insights/script.js')?.id).toBe('vercel');
    // A self-hosted tracker is known by its own file names on any host.
    expect(vendorForUrl('https://stats.example.org/matomo.js')?.id).toBe('matomo');
    expect(vendorForUrl('//analytics.example.org/sub/piwik.php?idsite=1')?.id).toBe('matomo');
  });

  it('does not match look-alike hosts, same-origin assets or unparsable URLs', () => {
    for (const u of [
      'https://notgoogle-analytics.com/x.js',
      'https://plausible.io.example.org/js/script.js',
      '/_next/static/chunks/main.js',
      '/js/posthog.com.js',
      'http://[::1',
      '',
      'https://cdn.example.org/matomo.json',
      'https://docs.example.org/guides/matomo.js.html',
    ]) {
      expect(vendorForUrl(u), u).toBeUndefined();
    }
  });

  it('recognises snippets by signature but not ordinary code', () => {
    expect(vendorForSnippet("gtag('config', 'G-1')")?.id).toBe('google');
    expect(vendorForSnippet('analytics.load("k")')?.id).toBe('segment');
    expect(vendorForSnippet('document.documentElement.dataset.theme = localStorage.theme || "light"')).toBeUndefined();
    expect(vendorForSnippet('window.search = function(){}; heapq()')).toBeUndefined();
  });
});

describe('hide selectors', () => {
  it('CSS injection: a configured selector that could close the rule or the <style> element is refused', () => {
    for (const bad of ['a{}body{display:none', '</style><script>alert(1)</script>', '#x;@import url(//evil)', 'a/*', '', 'a\\7b']) {
      expect(() => checkSelector(bad), bad).toThrow(UsageError);
    }
    expect(checkSelector(' nav > .search ')).toBe('nav > .search');
  });

  it("overrides replace a feature's defaults; the style hides only features that are off", () => {
    expect(widgetsFor('search', { search: { selectors: ['.my-search'] } }).selectors).toEqual(['.my-search']);
    const style = hideStyle(resolveFeatures({ deployment: 'client-hosted', enable: ['search'] }), { assistant: { selectors: ['.bot'] } })!;
    expect(style.code).toContain('.bot');
    expect(style.code).not.toContain('#search-bar');
    expect(style.code).toMatch(/\{display:none!important\}$/);
    expect(hideStyle(resolveFeatures({ deployment: 'cloud' }))).toBeNull();
  });
});
