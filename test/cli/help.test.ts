import { describe, it, expect, vi, beforeAll, afterAll } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PassThrough } from 'node:stream';
import type { ParseArgsConfig } from 'node:util';
import { airlock } from '../helpers/bin.js';
import { DEPLOYMENTS, FEATURES } from '../../src/features/index.js';
import { makePackage } from '../helpers/make-package.js';
import { cleanup, tempRoot } from '../serve/helpers.js';

/**
 * Help texts: every option of every command registered in src/cli/main.ts (those
 * added later included) appears in its --help, every --help states the exit codes, no --help
 * points at a document the repository does not have, and --json names the package path `package`
 * in every command. The options are read from the command itself: its call of args.ts `parse`.
 */
type Options = NonNullable<ParseArgsConfig['options']>;
const seen: { options: Options | null } = { options: null };
class Captured extends Error {}
vi.mock('../../src/cli/args.js', async (load) => {
  const real = await load<typeof import('../../src/cli/args.js')>();
  return {
    ...real,
    parse: (_argv: string[], options: Options) => {
      seen.options = options;
      throw new Captured();
    },
  };
});
const { COMMANDS } = await import('../../src/cli/main.js');

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const ctx = () => ({ env: {}, cwd: ROOT, stdout: new PassThrough(), stderr: new PassThrough(), interactive: false });
const flagIn = (usage: string, flag: string) => new RegExp(`(^|[\\s\\[/(])${flag.replace(/[-]/g, '\\-')}(?![\\w-])`, 'm').test(usage);

describe('every command’s --help', () => {
  for (const name of Object.keys(COMMANDS)) {
    it(`${name}: lists each of its options, states the exit codes, cites only documents that exist`, async () => {
      const cmd = (await COMMANDS[name]!()).default;
      seen.options = null;
      await expect(cmd.run([], ctx())).rejects.toBeInstanceOf(Captured); // the command parses its argv first, with args.ts
      const captured = seen.options as Options | null; // set by the mocked parse
      const options = Object.entries(captured ?? {}).filter(([o]) => o !== 'help');
      for (const [option, spec] of options) {
        expect(flagIn(cmd.usage, `--${option}`), `${name} --help does not mention --${option}`).toBe(true);
        if (spec.short) expect(flagIn(cmd.usage, `-${spec.short}`), `${name} --help does not mention -${spec.short}`).toBe(true);
      }
      expect(cmd.usage, `${name} --help`).toMatch(/Exit codes: 0 /);
      for (const [doc] of cmd.usage.matchAll(/\b[\w./-]+\.md\b/g)) expect(existsSync(join(ROOT, doc)), `${name} --help cites ${doc}`).toBe(true);
      expect(cmd.summary.length).toBeGreaterThan(0);
    });
  }

  it('the binary prints it on stdout with exit 0, for --help and -h alike', () => {
    for (const name of Object.keys(COMMANDS).slice(0, 4)) {
      for (const h of ['--help', '-h']) {
        const r = airlock([name, h]);
        expect(r.status, `${name} ${h}`).toBe(0);
        expect(r.stdout).toMatch(new RegExp(`^usage: airlock ${name}`));
      }
    }
    const top = airlock(['--help']);
    for (const name of Object.keys(COMMANDS)) expect(top.stdout).toContain(`  ${name} `);
  });
});

describe('serve --help', () => {
  it('serve --help lists every feature and deployment type the parser accepts (one list, not typed twice)', () => {
    const r = airlock(['serve', '--help']);
    expect(r.status).toBe(0);
    const enable = /--enable F,\.\.\.\s+turn on configurable features \(([^)]*)\)/.exec(r.stdout);
    expect(enable?.[1]?.split(', ')).toEqual([...FEATURES]);
    expect(r.stdout).toContain(`--deployment TYPE    ${DEPLOYMENTS.join(' | ')}`);
    expect(r.stdout).toContain('local-search');
  });
});

describe('--json field names', () => {
  let root: string;
  let pkg: string;
  beforeAll(async () => {
    root = await tempRoot('airlock-help-');
    pkg = (await makePackage({ outDir: join(root, 'pkg') })).pkgPath;
  });
  afterAll(async () => cleanup(root));

  it('the package path is `package` in inspect, verify and import (as in fetch); every document has ok', () => {
    for (const args of [
      ['inspect', pkg],
      ['verify', pkg, '--allow-unsigned'],
      ['import', pkg, '--store', join(root, 's'), '--allow-unsigned', '--no-precompress'],
    ]) {
      const r = airlock([...args, '--json']);
      expect(r.status, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(doc, args[0]).toMatchObject({ ok: true, package: pkg });
      expect(doc, args[0]).not.toHaveProperty('path');
    }
    expect(JSON.parse(airlock(['list', '--store', join(root, 's'), '--json']).stdout)).toMatchObject({ ok: true });
  });
});
