import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { contentLength, isExpiredLinkAnswer, parseContentRange, plainMd5, safeUrl, statedSha256, strongEtag } from '../../src/fetch/validators.js';
import { backoffMs, isTransientNetworkError, parseRetryAfter } from '../../src/fetch/retry.js';
import { checkDomain, deriveVersionLabel } from '../../src/fetch/label.js';
import { nextInterval } from '../../src/fetch/poll.js';

describe('validators', () => {
  it('only strong ETags are usable in If-Range (RFC 9110 §13.1.5)', () => {
    expect(strongEtag({ etag: '"abc"' })).toBe('"abc"');
    expect(strongEtag({ etag: 'W/"abc"' })).toBeUndefined();
    expect(strongEtag({ etag: 'abc' })).toBeUndefined();
    expect(strongEtag({})).toBeUndefined();
  });
  it('a plain MD5 ETag is an MD5; a multipart one is not', () => {
    expect(plainMd5('"0123456789ABCDEF0123456789abcdef"')).toBe('0123456789abcdef0123456789abcdef');
    expect(plainMd5('"0123456789abcdef0123456789abcdef-12"')).toBeUndefined();
    expect(plainMd5(undefined)).toBeUndefined();
  });
  it('Content-Range: satisfied, unsatisfied, and nonsense', () => {
    expect(parseContentRange('bytes 10-19/100')).toEqual({ start: 10, end: 19, total: 100 });
    expect(parseContentRange('bytes 10-19/*')).toEqual({ start: 10, end: 19, total: undefined });
    expect(parseContentRange('bytes */100')).toEqual({ start: -1, end: -1, total: 100 });
    expect(parseContentRange('bytes 20-10/100')).toBeUndefined();
    expect(parseContentRange('bytes 10-100/100')).toBeUndefined();
    expect(contentLength({ 'content-length': '12x' })).toBeUndefined();
  });
  it('Repr-Digest (RFC 9530) and x-amz-checksum-sha256 give the stated sha256', () => {
    const d = createHash('sha256').update('x').digest();
    expect(statedSha256({ 'repr-digest': `md5=:AAAA:, sha-256=:${d.toString('base64')}:` })).toBe(d.toString('hex'));
    expect(statedSha256({ 'x-amz-checksum-sha256': d.toString('base64') })).toBe(d.toString('hex'));
    expect(statedSha256({ 'x-amz-checksum-sha256': `${d.toString('base64')}-3` })).toBeUndefined();
  });
  it('expired-link answers of S3 and GCS are recognised, other refusals are not', () => {
    expect(isExpiredLinkAnswer(403, '<Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>')).toBe(true);
    expect(isExpiredLinkAnswer(400, '<Error><Code>ExpiredToken</Code></Error>')).toBe(true);
    expect(isExpiredLinkAnswer(403, '<Error><Code>SignatureDoesNotMatch</Code></Error>')).toBe(false);
    expect(isExpiredLinkAnswer(404, 'Request has expired')).toBe(false);
  });
  it('presigned query strings (bearer credentials) never reach a message', () => {
    expect(safeUrl('https://b.s3.example/k/bundle.tar.gz?X-Amz-Signature=secret')).toBe('https://b.s3.example/k/bundle.tar.gz?…');
    // schemes without an origin are named by scheme (a redirect to file: is refused naming it)
    expect(safeUrl('file:///etc/passwd')).toBe('file:///etc/passwd');
    expect(safeUrl(`data:text/css,${'a'.repeat(300)}`)).toBe(`data:text/css,${'a'.repeat(191)}…`);
  });
});

describe('retry', () => {
  it('classifies broken connections as transient, through causes', () => {
    expect(isTransientNetworkError(Object.assign(new Error('x'), { code: 'UND_ERR_SOCKET' }))).toBe(true);
    expect(isTransientNetworkError(new Error('x', { cause: Object.assign(new Error('y'), { code: 'ECONNRESET' }) }))).toBe(true);
    expect(isTransientNetworkError(Object.assign(new Error('x'), { code: 'ENOSPC' }))).toBe(false);
  });
  it('backoff is capped, jittered, and honours Retry-After', () => {
    const p = { retries: 5, baseMs: 100, maxMs: 1000 };
    expect(backoffMs(1, p, undefined, () => 0.999)).toBeLessThan(100);
    expect(backoffMs(10, p, undefined, () => 0.999)).toBeLessThan(1000);
    expect(backoffMs(1, p, 0.5, () => 0)).toBe(500);
    expect(parseRetryAfter('3')).toBe(3);
    expect(parseRetryAfter(new Date(Date.now() + 5000).toUTCString())).toBeGreaterThanOrEqual(4);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(nextInterval(100, 0)).toBe(100);
    expect(nextInterval(100, 50)).toBe(800);
  });
});

describe('labels and domains', () => {
  it('derives YYYYMMDD-HHMMSS from the job creation time, else a sanitised job id', () => {
    expect(deriveVersionLabel({ jobId: 'j', createdAt: '2024-05-06T07:08:09.123Z' })).toBe('20240506-070809');
    expect(deriveVersionLabel({ jobId: 'a/b c' })).toBe('job-a-b-c');
  });
  it('path traversal through --domain is refused', () => {
    for (const bad of ['../x', 'a/b', '..', 'a..b/', 'a\\b', '']) expect(() => checkDomain(bad)).toThrow(/invalid --domain/);
    expect(checkDomain('docs.example.com')).toBe('docs.example.com');
  });
});
