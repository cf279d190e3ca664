import { describe, expect, it } from 'vitest';
import { EXIT, UsageError } from '../../src/errors.js';
import { ANALYTICS_VENDORS, DEPLOYMENTS, cspFor, featuresDocument, featuresScript, resolveFeatures, transformHtmlDetailed } from '../../src/features/index.js';
import { directive, fixturePages, metaFlags, scriptFlags, sha256Source } from './helpers.js';

const ORIGINS = {
  assistantOrigins: ['https://api.docservice.example'],
  searchOrigins: ['https://search.docservice.example'],
  playgroundOrigins: ['https://api.example.com'],
};
const FETCH_DIRECTIVES = ['default-src', 'script-src', 'style-src', 'img-src', 'font-src', 'connect-src'];

describe('cspFor', () => {
  it('air-gapped exfiltration: with every upstream configured, the page may still reach only its own origin', () => {
    const r = resolveFeatures({ deployment: 'air-gapped' });
    const csp = cspFor(r, { ...ORIGINS, scriptHashes: [], styleHashes: [] });
    for (const d of FETCH_DIRECTIVES) {
      for (const src of directive(csp, d)) expect(src, `${d} ${src}`).toMatch(/^('self'|'sha256-[A-Za-z0-9+/=]+'|'unsafe-inline'|data:)$/);
    }
    expect(directive(csp, 'connect-src')).toEqual(["'self'"]);
    expect(directive(csp, 'object-src')).toEqual(["'none'"]);
    for (const d of ['frame-ancestors', 'base-uri', 'form-action']) expect(directive(csp, d)).toEqual(["'self'"]);
  });

  it('script injection: scripts are allowed by hash only, never by unsafe-inline', () => {
    for (const deployment of DEPLOYMENTS) {
      const r = resolveFeatures({ deployment });
      const csp = cspFor(r, { scriptHashes: [sha256Source('a()')] });
      expect(directive(csp, 'script-src')).not.toContain("'unsafe-inline'");
      expect(directive(csp, 'script-src')).not.toContain("'unsafe-eval'");
      expect(directive(csp, 'script-src')).toContain(sha256Source('a()'));
      expect(directive(csp, 'script-src')).toContain(sha256Source(featuresScript(r).code));
    }
  });

  it('connect-src lists the origins of features that are on and no others', () => {
    const ch = resolveFeatures({ deployment: 'client-hosted', enable: ['assistant'] });
    const connect = directive(cspFor(ch, ORIGINS), 'connect-src');
    expect(connect).toEqual(["'self'", 'https://api.docservice.example', 'https://api.example.com']);
    const pg = resolveFeatures({ deployment: 'air-gapped', enable: ['api-playground'] });
    expect(directive(cspFor(pg, ORIGINS), 'connect-src')).toEqual(["'self'", 'https://api.example.com']);
  });

  it('third-party script origins only when analytics is on', () => {
    const on = cspFor(resolveFeatures({ deployment: 'client-hosted', enable: ['analytics'] }));
    const off = cspFor(resolveFeatures({ deployment: 'client-hosted' }));
    for (const v of ANALYTICS_VENDORS) for (const s of v.script) expect(directive(on, 'script-src')).toContain(s);
    expect(directive(on, 'connect-src')).toContain('https://*.posthog.com');
    expect(directive(off, 'script-src').filter((s) => s.includes('://'))).toEqual([]);
    expect(directive(off, 'connect-src')).toEqual(["'self'"]);
  });

  it('styles: unsafe-inline by default (no hashes, which would disable it); hashes only with strictStyles', () => {
    const r = resolveFeatures();
    expect(directive(cspFor(r, { styleHashes: [sha256Source('a{}')] }), 'style-src')).toEqual(["'self'", "'unsafe-inline'"]);
    expect(directive(cspFor(r, { styleHashes: [sha256Source('a{}')], strictStyles: true }), 'style-src')).toEqual(["'self'", sha256Source('a{}')]);
  });

  it('directive injection: a configured origin with ; or spaces or a path is refused, naming it', () => {
    for (const bad of ["https://a.example; script-src 'unsafe-inline'", 'https://a.example/path', "'unsafe-inline'", '*', 'javascript:alert(1)']) {
      try {
        cspFor(resolveFeatures({ deployment: 'cloud' }), { assistantOrigins: [bad] });
        throw new Error(`accepted ${bad}`);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        expect((err as UsageError).exitCode).toBe(EXIT.USAGE);
        expect((err as UsageError).message).toContain(JSON.stringify(bad));
      }
    }
    expect(() => cspFor(resolveFeatures(), { scriptHashes: ["'unsafe-inline'"] })).toThrow(UsageError);
  });
});

describe('/_airlock/features, the injected flags and the CSP agree', () => {
  const [, page] = fixturePages().find(([p]) => p === 'index.html')!;
  const variants = [
    resolveFeatures({ deployment: 'air-gapped' }),
    resolveFeatures({ deployment: 'air-gapped', enable: ['api-playground'] }),
    resolveFeatures({ deployment: 'client-hosted' }),
    resolveFeatures({ deployment: 'client-hosted', enable: ['analytics', 'assistant', 'search'] }),
    resolveFeatures({ deployment: 'cloud' }),
    resolveFeatures({ deployment: 'cloud', disable: ['analytics'] }),
  ];
  for (const r of variants) {
    it(`${r.deployment} ${JSON.stringify(r.features)}`, async () => {
      const res = await transformHtmlDetailed(page, { features: r.features, deployment: r.deployment, assistantBase: '/' });
      const html = res.html.toString();
      const doc = featuresDocument(r);
      expect(metaFlags(html)).toEqual(doc);
      expect(scriptFlags(html)).toEqual(doc);
      const flagsText = /<script>(window\.__AIRLOCK_FEATURES__=[^<]*)<\/script>/.exec(html)![1]!;
      const csp = cspFor(r, { ...ORIGINS, scriptHashes: res.scriptHashes, styleHashes: res.styleHashes });
      expect(directive(csp, 'script-src')).toContain(sha256Source(flagsText));
      const connect = directive(csp, 'connect-src');
      expect(connect.includes('https://api.docservice.example')).toBe(doc.features.assistant);
      expect(connect.includes('https://search.docservice.example')).toBe(doc.features.search);
      expect(connect.includes('https://api.example.com')).toBe(doc.features.apiPlayground);
      expect(directive(csp, 'script-src').includes('https://www.googletagmanager.com')).toBe(doc.features.analytics);
      expect(html.includes('googletagmanager.com/gtag/js')).toBe(doc.features.analytics);
      const hidden = /<style data-airlock="hide">([^<]*)<\/style>/.exec(html)?.[1] ?? '';
      expect(hidden.includes('#search-bar')).toBe(!doc.features.search);
      expect(hidden.includes('#assistant-widget')).toBe(!doc.features.assistant);
      if (r.deployment === 'air-gapped') expect(connect.filter((s) => s !== "'self'" && s !== 'https://api.example.com')).toEqual([]);
    });
  }
});

describe('createPagePolicy (the server glue)', () => {
  it('gives each transformed page a CSP with exactly its own inline script hashes', async () => {
    const { createPagePolicy } = await import('../../src/features/index.js');
    const r = resolveFeatures({ deployment: 'air-gapped' });
    const policy = createPagePolicy(r);
    await policy.transform(Buffer.from('<html><head><script>one()</script></head></html>'), 'a.html');
    await policy.transform(Buffer.from('<html><head><script>two()</script></head></html>'), 'b.html');
    expect(directive(policy.cspFor('a.html'), 'script-src')).toContain(sha256Source('one()'));
    expect(directive(policy.cspFor('a.html'), 'script-src')).not.toContain(sha256Source('two()'));
    expect(directive(policy.cspFor('b.html'), 'script-src')).toContain(sha256Source('two()'));
    expect(policy.cspFor('style.css')).toBe(policy.baseCsp);
    expect(directive(policy.baseCsp, 'script-src')).toEqual(["'self'", sha256Source(featuresScript(r).code)]);
  });
});
