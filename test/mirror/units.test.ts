import { describe, expect, it } from 'vitest';
import { checkBearer, checkLink, hashToken, jobIdFor, labelOfJob, parseTokens, signLink } from '../../src/mirror/index.js';

const secret = Buffer.alloc(32, 7);
const claims = { label: 'v1', name: 'bundle.tar.gz', form: 'archive' as const, expires: 2_000_000_000 };

describe('mirror pure parts', () => {
  it('link signatures: valid until expiry; every claim is covered', () => {
    const q = new URLSearchParams(signLink(secret, claims));
    expect(checkLink(secret, 'v1', 'bundle.tar.gz', q, 1_000)).toMatchObject({ ok: true });
    expect(checkLink(secret, 'v1', 'bundle.tar.gz', q, 2_000_000_000_000)).toEqual({ ok: false, why: 'expired' });
    expect(checkLink(secret, 'v2', 'bundle.tar.gz', q, 1_000)).toEqual({ ok: false, why: 'forged' });
    expect(checkLink(secret, 'v1', 'bundle.zip', q, 1_000)).toEqual({ ok: false, why: 'forged' });
    expect(checkLink(Buffer.alloc(32, 8), 'v1', 'bundle.tar.gz', q, 1_000)).toEqual({ ok: false, why: 'forged' });
  });
  it('parameter pollution: a duplicated expires or sig is refused, not resolved by picking one', () => {
    const q = new URLSearchParams(signLink(secret, claims));
    q.append('expires', '9999999999');
    expect(checkLink(secret, 'v1', 'bundle.tar.gz', q, 1_000)).toEqual({ ok: false, why: 'malformed' });
  });
  it('tokens file: hashes only; a clear-text token line is refused without echoing it', () => {
    const ok = parseTokens(`# c\n\n${hashToken('svc_a')}\n`, 'f');
    expect(ok).toHaveLength(1);
    expect(() => parseTokens('svc_secret_token\n', 'f')).toThrow(/f:1: not a token hash/);
    expect(() => parseTokens('svc_secret_token\n', 'f')).not.toThrow(/svc_secret_token/);
    expect(() => parseTokens('# only comments\n', 'f')).toThrow(/no token hashes/);
    expect(checkBearer('Bearer svc_a', ok)).toBe('ok');
    expect(checkBearer('Bearer svc_b', ok)).toBe('wrong');
    expect(checkBearer(undefined, ok)).toBe('missing');
    expect(checkBearer('svc_a', ok)).toBe('missing');
  });
  it('job ids map to labels strictly', () => {
    expect(labelOfJob(jobIdFor('2025.01-x_y'))).toBe('2025.01-x_y');
    for (const bad of ['mv_', 'mv_..', 'mv_../x', 'mv_a/b', 'job_v1', 'mv_.v1', 'mv_v1\0']) expect(labelOfJob(bad), bad).toBeNull();
  });
});
