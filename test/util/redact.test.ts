import { describe, expect, it } from 'vitest';
import { redact } from '../../src/util/redact.js';

describe('redact', () => {
  it('key leak: admin and assistant keys anywhere in a message are replaced', () => {
    const out = redact('bad key svc_abc123XYZ and svc_dsc_q-w_e9 in url https://x/?k=svc_zz');
    expect(out).toBe('bad key svc_[REDACTED] and svc_dsc_[REDACTED] in url https://x/?k=svc_[REDACTED]');
    expect(out).not.toMatch(/abc123|q-w_e9|svc_zz/);
  });

  it('a bare type prefix in help text stays readable', () => {
    expect(redact('need an assistant key (svc_dsc_...): set AIRLOCK_ASSISTANT_KEY')).toBe('need an assistant key (svc_dsc_...): set AIRLOCK_ASSISTANT_KEY');
  });

  it('a key that is only a prefix plus one character is still replaced', () => {
    expect(redact('svc_dsc_x svc_d')).toBe('svc_dsc_[REDACTED] svc_[REDACTED]');
  });
});
