/**
 * Secrets never appear in output (CONTRACT "Environment"): any `svc_…` key in a message is
 * replaced before it is printed or logged. Keys are [A-Za-z0-9_-] runs after the prefix.
 */
const KEY = /svc_[A-Za-z0-9_-]+/g;

export function redact(text: string): string {
  return text.replace(KEY, (k) => (k.startsWith('svc_dsc_') ? 'svc_dsc_[REDACTED]' : 'svc_[REDACTED]'));
}
