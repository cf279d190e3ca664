import { MalformedError } from '../errors.js';
import { jsonTooDeepAt } from '../util/json-depth.js';

export interface JsonBounds {
  maxBytes: number;
  maxDepth: number;
}

/**
 * Refuse untrusted JSON that is too big or nested too deep BEFORE it is parsed: JSON.parse itself
 * copes with any depth, but everything after it that walks the value recursively (schema
 * validation, JSON.stringify for `inspect --json`) overflows the stack on 20,000 levels.
 * Pure. Throws MalformedError (exit 4) naming `subject`.
 */
export function checkJsonBounds(bytes: Uint8Array, bounds: JsonBounds, subject: string): void {
  const refuse = (why: string, extra: Record<string, unknown>) => new MalformedError('AIRLOCK_BAD_MANIFEST', `${subject} ${why}`, { subject, ...extra });
  if (bytes.length > bounds.maxBytes) {
    throw refuse(`is ${bytes.length} bytes, more than the limit of ${bounds.maxBytes}`, { limit: bounds.maxBytes, actual: bytes.length });
  }
  const at = jsonTooDeepAt(bytes, bounds.maxDepth);
  if (at >= 0) throw refuse(`nests deeper than ${bounds.maxDepth} levels (at byte ${at})`, { limit: bounds.maxDepth, at });
}
