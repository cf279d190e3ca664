import { UsageError } from '../errors.js';

/** The values a numeric option (a flag, or its key in a values file) accepts. */
export interface NumberRange {
  min: number;
  /** Omitted: no upper bound worth saying (safe integers). */
  max?: number;
  /** Decimals allowed (seconds such as 0.5); whole numbers otherwise. */
  decimals?: boolean;
  /** What the number counts, for the message ("seconds"). */
  unit?: string;
}

/** The accepted range in words: "a whole number from 0 to 65535", "a number of seconds of at least 1". */
export function rangeText(r: NumberRange): string {
  const kind = (r.decimals ? 'a number' : 'a whole number') + (r.unit ? ` of ${r.unit}` : '');
  return r.max === undefined || r.max >= Number.MAX_SAFE_INTEGER ? `${kind} of at least ${r.min}` : `${kind} from ${r.min} to ${r.max}`;
}

/**
 * The one reader of numeric options, for every command: digits only (no sign, no exponent, no
 * hex, no spaces), within the range. Anything else, `-1` included, is a usage error (exit 2)
 * naming the option and the accepted range.
 */
export function numberOption(value: string | undefined, flag: string, r: NumberRange): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  const ok = (r.decimals ? /^\d+(\.\d+)?$/ : /^\d+$/).test(value) && n >= r.min && n <= (r.max ?? Number.MAX_SAFE_INTEGER);
  if (!ok) throw new UsageError(`${flag} takes ${rangeText(r)}, not ${JSON.stringify(value.slice(0, 40))}`, { subject: flag });
  return n;
}
