import { describe, expect, it } from 'vitest';
import { failFastResponse, featureForPath } from '../../src/features/index.js';

describe('fail fast for features that are off', () => {
  it('maps the service paths the exported site calls to their feature', () => {
    expect(featureForPath('POST', '/discovery/v2/assistant/docs.example.com/message')).toBe('assistant');
    expect(featureForPath('POST', '/discovery/v2/search/docs.example.com')).toBe('search');
    expect(featureForPath('GET', '/discovery/v1/search?q=x')).toBe('search');
    expect(featureForPath('GET', '/discovery/v2/pages/docs.example.com')).toBe('search');
    expect(featureForPath('POST', '/_vercel/insights/view')).toBe('analytics');
  });

  it("airlock's own panels' files belong to their features: the search dialog's and the assistant panel's", () => {
    expect(featureForPath('GET', '/_airlock/search.js')).toBe('local-search');
    expect(featureForPath('GET', '/_airlock/assistant.js')).toBe('local-assistant');
    expect(featureForPath('GET', '/_airlock/assistant.css')).toBe('local-assistant');
    expect(featureForPath('GET', '/_airlock/assistant.json')).toBeNull();
  });

  it('leaves site pages alone, also pages that merely live under /discovery/', () => {
    for (const p of [
      '/',
      '/index.html',
      '/discovery',
      '/discovery/intro',
      '/docs/discovery/v2/search',
      '/discoveryv2/search',
      '/_next/static/chunks/assistant-b03338ff.js',
    ]) {
      expect(featureForPath('GET', p), p).toBeNull();
    }
  });

  it('answers 404 JSON naming why: unavailable in the deployment type, or turned off for the site', () => {
    const r = failFastResponse('assistant', 'air-gapped');
    expect(r.status).toBe(404);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(JSON.parse(r.body)).toEqual({ error: 'assistant is not available in air-gapped deployments' });
    expect(JSON.parse(failFastResponse('search', 'cloud').body).error).toBe('search is turned off for this site');
    // configurable and not enabled, or on and turned off: never "not available" where the matrix has it
    expect(JSON.parse(failFastResponse('search', 'client-hosted').body).error).toBe('search is turned off for this site');
    expect(JSON.parse(failFastResponse('local-search', 'air-gapped').body).error).toBe('local-search is turned off for this site');
  });
});
