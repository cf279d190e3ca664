/**
 * Secrets never appear in output (they come from the environment, never argv): any `svc_…` key in a message is
 * replaced before it is printed or logged. Keys are [A-Za-z0-9_-] runs after the prefix.
 * A bare type prefix (`svc_`, `svc_dsc_`, as in "an assistant key (svc_dsc_...)") holds no
 * secret and is left readable.
 */
const KEY = /svc_[A-Za-z0-9_-]+/g;

export function redact(text: string): string {
  return text.replace(KEY, (k) => {
    if (k === 'svc_dsc_') return k;
    return k.startsWith('svc_dsc_') ? 'svc_dsc_[REDACTED]' : 'svc_[REDACTED]';
  });
}
