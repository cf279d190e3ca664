import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';
import { VERSION_LABEL, checkLabel } from '../package/label.js';

type Options = NonNullable<ParseArgsConfig['options']>;

/**
 * parseArgs with the tool's rules: unknown flags and missing values are usage errors (exit 2)
 * that name the flag, and secrets are never accepted as flag values (they would show in `ps`).
 */
export function parse<O extends Options>(argv: string[], options: O, allowPositionals = true) {
  try {
    return parseArgs({ args: argv, options: { help: { type: 'boolean', short: 'h' }, ...options }, allowPositionals, strict: true });
  } catch (err) {
    throw new UsageError((err as Error).message.replace(/\. To specify a positional.*$/s, ''), { subject: 'argv' });
  }
}

export function requireString(value: unknown, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`missing required ${flag}`, { subject: flag });
  return value;
}

export function parseIntFlag(value: unknown, flag: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || n < min || n > max) {
    throw new UsageError(`${flag} must be an integer between ${min} and ${max}, got ${JSON.stringify(value)}`, { subject: flag });
  }
  return n;
}

/** The rule belongs to the package format (src/package/label.ts); re-exported for the commands. */
export { VERSION_LABEL };

export function checkVersionLabel(v: string, flag = 'version'): string {
  return checkLabel(v, flag);
}
