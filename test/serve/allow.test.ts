import { describe, it, expect } from 'vitest';
import { allowTable } from '../../src/serve/allow.js';

describe('allowTable (the Allow header of a 405)', () => {
  const allowed = allowTable([
    { method: 'ALL', path: '*' },
    { method: 'GET', path: '/_airlock/health' },
    { method: 'POST', path: '/v1/static-export/jobs' },
    { method: 'GET', path: '/v1/static-export/jobs/:jobId' },
    { method: 'POST', path: '/v1/static-export/jobs/:jobId/bundle' },
    { method: 'PUT', path: '/_airlock/objects/*' },
    { method: 'GET', path: '/id/:n{[0-9]+}' },
  ]);
  it('lists the methods of the matching patterns; GET brings HEAD; middleware (ALL) is not a method', () => {
    expect(allowed('/_airlock/health')).toEqual(['GET', 'HEAD']);
    expect(allowed('/v1/static-export/jobs')).toEqual(['POST']);
    expect(allowed('/v1/static-export/jobs/se_1')).toEqual(['GET', 'HEAD']);
    expect(allowed('/v1/static-export/jobs/se_1/bundle')).toEqual(['POST']);
    expect(allowed('/_airlock/objects/a/b')).toEqual(['PUT']);
    expect(allowed('/id/42')).toEqual(['GET', 'HEAD']);
    expect(allowed('/id/x')).toEqual([]);
    expect(allowed('/v1/static-export/jobs/a/b/c')).toEqual([]);
    expect(allowed('/nothing')).toEqual([]);
  });
});
