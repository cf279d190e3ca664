import { describe, it, expect, vi } from 'vitest';
import { PassThrough } from 'node:stream';
import type { ParseArgsConfig } from 'node:util';
import { airlockAsync } from '../helpers/bin.js';
import type { NumberRange } from '../../src/util/number-option.js';

/**
 * Option parsing speaks to the user: a mistyped option names itself, the nearest real one and the
 * command's --help; a negative or malformed number names the option and the range it accepts
 * (never parseArgs' "ambiguous ... did you forget"). Every command and every numeric option is
 * walked in-process through `main` (the options are those the command gives args.ts `parse`,
 * recorded on the way); the built binary is checked on the cases a new user met.
 */
type Spec = NonNullable<ParseArgsConfig['options']>[string] & { number?: NumberRange };
const seen: { options: Record<string, Spec> | null } = { options: null };
vi.mock('../../src/cli/args.js', async (load) => {
  const real = await load<typeof import('../../src/cli/args.js')>();
  return {
    ...real,
    parse: ((argv, options, positionals) => {
      seen.options ??= options;
      return real.parse(argv, options, positionals);
    }) as typeof real.parse,
  };
});
const { COMMANDS, main } = await import('../../src/cli/main.js');

/** Commands whose first argument names a subcommand (their options follow it). */
const SUB: Record<string, string> = { trust: 'show', audit: 'show' };
const argsOf = (name: string, ...rest: string[]) => [name, ...(SUB[name] ? [SUB[name]] : []), ...rest];

async function run(argv: string[]): Promise<{ code: number; stderr: string }> {
  const stderr = new PassThrough();
  let text = '';
  stderr.on('data', (c: Buffer) => (text += c.toString()));
  const code = await main(argv, { env: {}, cwd: '/nonexistent-airlock-cwd', stdout: new PassThrough(), stderr, interactive: false });
  return { code, stderr: text };
}

/** Every command's options, recorded from its parse while it refuses an unknown option. */
async function allOptions(): Promise<Record<string, Array<[string, Spec]>>> {
  const out: Record<string, Array<[string, Spec]>> = {};
  for (const name of Object.keys(COMMANDS)) {
    seen.options = null;
    const r = await run(argsOf(name, '--no-such-option'));
    expect(r.code, `${name}: ${r.stderr}`).toBe(2);
    expect(r.stderr, name).toBe(`airlock ${name}: error: unknown option --no-such-option for airlock ${name}; see airlock ${name} --help [AIRLOCK_USAGE]\n`);
    out[name] = Object.entries(seen.options ?? {});
  }
  return out;
}

const rangeText = (r: NumberRange) => (r.max === undefined || r.max >= Number.MAX_SAFE_INTEGER ? `of at least ${r.min}` : `from ${r.min} to ${r.max}`);

describe('option parsing speaks to the user', () => {
  it('every command: an unknown option is exit 2 naming it and that command\'s --help; a near miss gets "did you mean"', async () => {
    const options = await allOptions();
    for (const [name, opts] of Object.entries(options)) {
      const long = opts.map(([o]) => o).find((o) => o.length > 4);
      if (!long) continue;
      const typo = long.slice(0, 2) + long.slice(3); // one letter dropped
      const r = await run(argsOf(name, `--${typo}`));
      expect(r.code, `${name} --${typo}`).toBe(2);
      expect(r.stderr, `${name} --${typo}`).toContain(`unknown option --${typo} for airlock ${name}; did you mean --${long}? see airlock ${name} --help`);
    }
  });

  it('every numeric option of every command: negative, malformed, empty and out-of-range values are exit 2 naming the option and its range', async () => {
    const options = await allOptions();
    const walked: string[] = [];
    for (const [name, opts] of Object.entries(options)) {
      for (const [option, spec] of opts) {
        if (!spec.number) continue;
        walked.push(`${name} --${option}`);
        const over = String((spec.number.max ?? Number.MAX_SAFE_INTEGER) + 1);
        for (const bad of ['-1', '-0.5', '1e3', '0x10', 'abc', ' 7', '', over]) {
          const r = await run(argsOf(name, `--${option}`, bad));
          expect(r.code, `${name} --${option} ${JSON.stringify(bad)}: ${r.stderr}`).toBe(2);
          expect(r.stderr, `${name} --${option} ${JSON.stringify(bad)}`).toMatch(
            new RegExp(`error: --${option} takes a (whole )?number (of \\w+ )?${rangeText(spec.number)}, not "`),
          );
        }
        if (spec.number.min > 0) expect((await run(argsOf(name, `--${option}`, String(spec.number.min - 1)))).code).toBe(2);
      }
    }
    for (const f of [
      'prune --keep',
      'serve --port',
      'serve --workers',
      'serve --skew-grace',
      'serve --follow-poll-ms',
      'preview --port',
      'emulate --port',
      'demo --port',
      'trust --threshold',
      'trust --serial',
      'agent-job --timeout',
      'audit --last',
    ]) {
      expect(walked, f).toContain(f);
    }
  });

  it('the built binary: --hlep, --keep -1, --port -1, --threshold abc', async () => {
    const [hlep, keep, port, threshold] = await Promise.all(
      [
        ['import', '--hlep'],
        ['prune', '--keep', '-1'],
        ['serve', '--port', '-1'],
        ['trust', 'init', '--threshold', 'abc'],
      ].map((a) => airlockAsync(a, { timeoutMs: 60_000 })),
    );
    expect(hlep!.status).toBe(2);
    expect(hlep!.stderr).toBe(
      'airlock import: error: unknown option --hlep for airlock import; did you mean --help? see airlock import --help [AIRLOCK_USAGE]\n',
    );
    expect(keep!.status).toBe(2);
    expect(keep!.stderr).toBe('airlock prune: error: --keep takes a whole number from 0 to 1000000, not "-1" [AIRLOCK_USAGE]\n');
    expect(port!.status).toBe(2);
    expect(port!.stderr).toBe('airlock serve: error: --port takes a whole number from 0 to 65535, not "-1" [AIRLOCK_USAGE]\n');
    expect(threshold!.status).toBe(2);
    expect(threshold!.stderr).toBe('airlock trust: error: --threshold takes a whole number from 1 to 64, not "abc" [AIRLOCK_USAGE]\n');
  });
});
