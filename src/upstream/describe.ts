import type { z } from 'zod';

type Issue = z.core.$ZodIssue;

const TYPE_WORDS: Record<string, string> = {
  string: 'a text string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
  bigint: 'a whole number',
  date: 'a date',
  record: 'an object',
  map: 'an object',
  set: 'a list',
};
const typeWords = (t: unknown) => TYPE_WORDS[String(t)] ?? `of type ${String(t)}`;

function bound(i: { origin: string; inclusive?: boolean }, n: unknown, most: boolean): string {
  const limit = `${i.inclusive === false ? (most ? 'below' : 'above') : most ? 'at most' : 'at least'} ${String(n)}`;
  switch (i.origin) {
    case 'string':
      return most ? `must be ${limit} characters long` : Number(n) === 1 && i.inclusive !== false ? 'must not be empty' : `must be ${limit} characters long`;
    case 'array':
    case 'set':
      return `must have ${limit} entries`;
    default:
      return `must be ${limit}`;
  }
}

/** How zod's default messages begin; anything else was written in a schema of ours. */
const LIBRARY_WORDING = /^(Invalid|Too (big|small)|Unrecognized key|Expected|Number must|String must|Required$)/;

/**
 * One schema issue in plain words, without its path ("must be a number", "must be at most 10"):
 * the library's own wording (regex sources, "Invalid input") never reaches a user. A custom
 * issue carries our own message.
 */
export function describeIssue(i: Issue): string {
  // A schema's own message (`.regex(RE, 'must be a host name')`) is ours already: kept as written.
  if (!LIBRARY_WORDING.test(i.message)) return i.message;
  switch (i.code) {
    case 'invalid_type':
      if (/received undefined$/.test(i.message)) return `is missing (must be ${typeWords(i.expected)})`;
      // A JSON number too large for a double (1e400) parses as Infinity: it is a number, just not one we can take.
      return /received (Infinity|NaN)$/.test(i.message) ? 'must be a finite number' : `must be ${typeWords(i.expected)}`;
    case 'too_big':
      return bound(i, i.maximum, true);
    case 'too_small':
      return bound(i, i.minimum, false);
    case 'invalid_format':
      return i.format === 'regex' || i.format === 'starts_with' || i.format === 'ends_with' || i.format === 'includes'
        ? 'is not in the allowed form'
        : `must be a valid ${i.format}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(i.divisor)}`;
    case 'unrecognized_keys':
      return `has unknown key${i.keys.length === 1 ? '' : 's'} ${i.keys.join(', ')}`;
    case 'invalid_key':
      return 'is not an allowed key';
    case 'invalid_element':
      return 'has an entry that is not allowed';
    case 'invalid_union':
      return 'does not match any allowed form';
    case 'invalid_value':
      return i.values.length === 1 ? `must be ${JSON.stringify(i.values[0])}` : `must be one of ${i.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'custom':
      return i.message;
    default:
      return 'is not valid';
  }
}

/** A field's path as the user sees it ("files.0.size"), or `root` for the whole document. */
export const issuePath = (i: Issue, root = '(root)'): string => (i.path.length ? i.path.map(String).join('.') : root);

/**
 * "path: words" for each issue, an issue said twice (zod reports a number past a bound once per
 * check) said once, at most `max` of them; `extra` adds to a path (the offending value).
 */
export function describeIssues(issues: readonly Issue[], max: number, extra: (i: Issue) => string = () => ''): string[] {
  const lines = [...new Set(issues.map((i) => `${issuePath(i)}${extra(i)}: ${describeIssue(i)}`))];
  return lines.length > max ? [...lines.slice(0, max), `... and ${lines.length - max} more`] : lines;
}

/** "jobId: is missing (must be a text string); progress: ..." — names every field at fault. */
export function describeZodError(err: z.ZodError, max = 10): string {
  return describeIssues(err.issues, max).join('; ');
}
