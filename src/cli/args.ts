import { parseArgs, type ParseArgsConfig } from 'node:util';
import { ArgvError, UsageError } from '../errors.js';
import { VERSION_LABEL, checkLabel } from '../package/label.js';
import { nearest } from '../util/nearest.js';
import { numberOption, type NumberRange } from '../util/number-option.js';

type Options = NonNullable<ParseArgsConfig['options']>;
/** An option of a command; `number`: a numeric option, checked by parse against this range. */
export type OptionSpec = Options[string] & { number?: NumberRange };
type Numbers<O> = { [K in keyof O as O[K] extends { number: NumberRange } ? K : never]?: number };

/** A numeric option (`--keep N`): its value is read by parse, before the command does anything. */
export const numeric = (range: NumberRange) => ({ type: 'string', number: range }) as const;

/** A value that reads as a negative number (`-1`, `-0.5`): the value of the option before it, never an option. */
const NEGATIVE = /^-\.?\d/;

/**
 * `--keep -1` as `--keep=-1`: a negative number after an option that takes a value is that value
 * (then refused by the option's own range, in words), not a mistyped option.
 */
function joinNegativeValues(argv: string[], options: Options): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') return [...out, ...argv.slice(i)];
    const spec = a.startsWith('--') && !a.includes('=') ? options[a.slice(2)] : undefined;
    if (spec?.type === 'string' && i + 1 < argv.length && NEGATIVE.test(argv[i + 1]!)) out.push(`${a}=${argv[++i]}`);
    else out.push(a);
  }
  return out;
}

/** parseArgs' complaint, in the tool's words: what is wrong, and what was probably meant. */
function argvError(err: unknown, options: Options): ArgvError | UsageError {
  const e = err as NodeJS.ErrnoException;
  const quoted = /'([^']*)'/.exec(e.message)?.[1] ?? '';
  const flag = quoted.replace(/ <value>$/, '');
  switch (e.code) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION': {
      const near = flag.startsWith('--') ? nearest(flag.slice(2), Object.keys(options)) : null;
      return new ArgvError(`unknown option ${flag}`, near ? `; did you mean --${near}?` : '', flag);
    }
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return new ArgvError(`unexpected argument ${JSON.stringify(flag)}`, ' (it takes options only)', flag);
    case 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE':
      if (/does not take an argument/.test(e.message)) return new ArgvError(`${flag} takes no value`, '', flag);
      if (/ambiguous/.test(e.message)) return new ArgvError(`${flag} needs a value`, ` (for a value starting with "-", write ${flag}=VALUE)`, flag);
      return new ArgvError(`${flag} needs a value`, '', flag);
    default:
      return new UsageError(e.message.replace(/\. To specify a positional.*$/s, ''), { subject: 'argv' });
  }
}

/**
 * parseArgs with the tool's rules: unknown flags and missing values are usage errors (exit 2)
 * that name the flag, suggest the nearest known one and point at the command's --help; a
 * negative number is the value of the option before it (refused by that option's range).
 */
export function parse<O extends Record<string, OptionSpec>>(argv: string[], options: O, allowPositionals = true) {
  const all = { help: { type: 'boolean', short: 'h' }, ...options } as const;
  let parsed;
  try {
    parsed = parseArgs({ args: joinNegativeValues(argv, all), options: all, allowPositionals, strict: true });
  } catch (err) {
    throw argvError(err, all);
  }
  // Every numeric option is read here, with the one rule (util/number-option.ts), before any other check.
  const numbers: Record<string, number | undefined> = {};
  for (const [k, spec] of Object.entries(options)) {
    if (spec.number) numbers[k] = numberOption((parsed.values as Record<string, string | undefined>)[k], `--${k}`, spec.number);
  }
  return { ...parsed, numbers: numbers as Numbers<O> };
}

export function requireString(value: unknown, flag: string): string {
  if (typeof value !== 'string' || value === '') throw new UsageError(`missing required ${flag}`, { subject: flag });
  return value;
}

/** The service's base URL: --api-url, else AIRLOCK_API_URL (exit 2 when neither is set). */
export function requireApiUrl(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  const url = flag ?? env.AIRLOCK_API_URL;
  if (!url) throw new UsageError('no API URL: pass --api-url or set AIRLOCK_API_URL', { subject: '--api-url' });
  return url;
}

/** A whole number within [min, max] inside another option's value (`--domain-threshold D=N`): the same rule. */
export function parseIntFlag(value: string | undefined, flag: string, min = 0, max = Number.MAX_SAFE_INTEGER): number | undefined {
  return numberOption(value, flag, { min, max });
}

/** The rule belongs to the package format (src/package/label.ts); re-exported for the commands. */
export { VERSION_LABEL };

export function checkVersionLabel(v: string, flag = 'version'): string {
  return checkLabel(v, flag);
}
