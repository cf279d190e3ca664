import { describe, expect, it } from 'vitest';
import { jobView } from '../../src/emulator/lifecycle.js';
import { amzDate, checkPresigned, parseAmzDate, presignQuery } from '../../src/emulator/presign.js';
import { parseRange } from '../../src/emulator/range.js';
import { htmlText, rank, terms } from '../../src/emulator/text.js';
import { mergeFaults, takeBurst, takeDrop, DEFAULT_FAULTS } from '../../src/emulator/faults.js';

const T = { queuedMs: 100, runningMs: 1000 };
const job = { jobId: 'j', domain: 'd', createdAt: 0, fail: false, pages: 40 };

describe('job lifecycle', () => {
  it('queued → running with growing progress and pages → completed', () => {
    expect(jobView(job, 50, T)).toEqual({
      jobId: 'j',
      status: 'queued',
      progress: 0,
      pageCount: 0,
      createdAt: new Date(0).toISOString(),
      updatedAt: new Date(0).toISOString(),
      error: null,
    });
    expect(jobView(job, 600, T)).toMatchObject({ status: 'running', progress: 50, pageCount: 20 });
    expect(jobView(job, 1099, T).progress).toBeLessThan(100);
    expect(jobView(job, 1100, T)).toEqual({
      jobId: 'j',
      status: 'completed',
      progress: 100,
      pageCount: 40,
      createdAt: new Date(0).toISOString(),
      updatedAt: new Date(1100).toISOString(),
      error: null,
    });
    expect(jobView({ ...job, pages: null }, 1100, T).pageCount).toBe(0);
  });
  it('a failing job fails halfway with an error text', () => {
    expect(jobView({ ...job, fail: true }, 400, T).status).toBe('running');
    expect(jobView({ ...job, fail: true }, 700, T)).toMatchObject({ status: 'failed', pageCount: 20, error: expect.stringContaining('export failed') });
  });
});

describe('presigned links', () => {
  const secret = Buffer.alloc(32, 1);
  const now = Date.parse('2024-03-04T05:06:07.890Z');
  it('dates round-trip in SigV4 basic format', () => {
    expect(amzDate(now)).toBe('20240304T050607Z');
    expect(parseAmzDate('20240304T050607Z')).toBe(Date.parse('2024-03-04T05:06:07Z'));
    expect(parseAmzDate('2024-03-04')).toBeUndefined();
  });
  it('valid until the lifetime ends, for GET only', () => {
    const q = new URLSearchParams(presignQuery(secret, 'k', now, 10).query);
    expect(checkPresigned(secret, 'GET', 'k', q, now + 9000)).toBe('ok');
    expect(checkPresigned(secret, 'GET', 'k', q, now + 10_000)).toBe('expired');
    expect(checkPresigned(secret, 'HEAD', 'k', q, now)).toBe('bad-signature');
    expect(checkPresigned(secret, 'GET', 'other', q, now)).toBe('bad-signature');
    expect(checkPresigned(Buffer.alloc(32, 2), 'GET', 'k', q, now)).toBe('bad-signature');
  });
});

describe('Range parsing (RFC 9110 §14.1.2)', () => {
  it.each([
    ['bytes=0-9', 100, { kind: 'partial', start: 0, end: 9 }],
    ['bytes=90-200', 100, { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-10', 100, { kind: 'partial', start: 90, end: 99 }],
    ['bytes=-500', 100, { kind: 'partial', start: 0, end: 99 }],
    ['bytes=100-', 100, { kind: 'unsatisfiable' }],
    ['bytes=5-2', 100, { kind: 'unsatisfiable' }],
    ['bytes=-0', 100, { kind: 'unsatisfiable' }],
    ['bytes=0-1,5-6', 100, { kind: 'full' }],
    ['items=0-1', 100, { kind: 'full' }],
  ])('%s of %i', (h, size, want) => expect(parseRange(h, size)).toEqual(want));
});

describe('text retrieval', () => {
  it('strips scripts and tags, decodes entities', () => {
    expect(htmlText('<head><title>t</title></head><body><script>evil()</script><p>a &amp; b</p></body>')).toBe('a & b');
  });
  it('ranks title hits above body hits and drops stop words', () => {
    expect(terms('How do I install the Gizmo?')).toEqual(['install', 'gizmo']);
    const pages = [
      { path: 'a.html', url: 'u/a', title: 'Other', text: 'install install' },
      { path: 'b.html', url: 'u/b', title: 'Install', text: 'one install' },
    ];
    expect(rank(pages, 'install', 5).map((h) => h.page.path)).toEqual(['b.html', 'a.html']);
    expect(rank(pages, 'the', 5)).toEqual([]);
  });
});

describe('fault switches', () => {
  it('bursts count down and drops are consumed once unless always', () => {
    const f = mergeFaults(DEFAULT_FAULTS, { burst429: { count: 1, retryAfterSeconds: 2 }, burst500: { count: 1 }, dropAfterBytes: { bytes: 5, times: 1 } });
    expect(takeBurst(f)).toEqual({ status: 429, retryAfter: 2 });
    expect(takeBurst(f)).toEqual({ status: 500 });
    expect(takeBurst(f)).toBeNull();
    expect(takeDrop(f)).toBe(5);
    expect(takeDrop(f)).toBeNull();
    const g = mergeFaults(DEFAULT_FAULTS, { dropAfterBytes: { bytes: 7, times: 'always' } });
    expect([takeDrop(g), takeDrop(g)]).toEqual([7, 7]);
  });
});
