import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlock, airlockAsync } from '../helpers/bin.js';
import { makePackage } from '../helpers/make-package.js';
import { cleanup, labelledSite, tempRoot, writeVersion } from '../serve/helpers.js';
import { COMMANDS } from '../../src/cli/main.js';

/**
 * "Already exists" is one rule for every command that writes a file: the output is never replaced,
 * and the refusal is a usage error (exit 2) naming the path, because the user fixes it by choosing
 * another path (or --force, where a command has one). Each command's --help says so.
 */
let root: string;
let pkgs: { v1: string; v2: string };
beforeAll(async () => {
  root = await tempRoot('airlock-exists-');
  pkgs = {
    v1: (await makePackage({ outDir: join(root, 'pkg'), version: 'v1' })).pkgPath,
    v2: (await makePackage({ outDir: join(root, 'pkg'), version: 'v2' })).pkgPath,
  };
  await writeVersion(join(root, 'store'), 'v1', labelledSite('v1'));
});
afterAll(async () => cleanup(root));

const OLD = 'an older file, kept';

describe('an output that already exists: exit 2, named, never replaced', () => {
  it('keygen, pack, delta, fetch, trust draft, trust sign and receipt (the built binary)', async () => {
    const key = join(root, 'signer');
    expect(airlock(['keygen', '--out', key]).status).toBe(0);
    const keyPub = await readFile(`${key}.pub`, 'utf8');
    const again = airlock(['keygen', '--out', key]);
    expect(again.status, again.stderr).toBe(2);
    expect(again.stderr).toContain(`${key}.key already exists; refusing to overwrite a key; choose another --out [AIRLOCK_EXISTS]`);
    expect(await readFile(`${key}.pub`, 'utf8')).toBe(keyPub);

    const out = (name: string) => join(root, 'out', name);
    const cases: Array<{ args: string[]; path: string; env?: NodeJS.ProcessEnv; code?: string }> = [
      {
        args: ['pack', join(root, 'pkg', 'v1-bundle.tar.gz'), '--domain', 'docs.example.com', '--version-label', 'p1', '--out', join(root, 'out')],
        path: out('docs.example.com-p1.airlock'),
      },
      { args: ['delta', pkgs.v1, pkgs.v2, '--out', join(root, 'out')], path: out('docs.example.com-v2.delta.airlock') },
      {
        args: ['fetch', '--domain', 'docs.example.com', '--version-label', 'f1', '--out', join(root, 'out'), '--api-url', 'http://127.0.0.1:9'],
        path: out('docs.example.com-f1.airlock'),
        env: { AIRLOCK_ADMIN_KEY: 'svc_adm_' + 'x'.repeat(24) },
      },
      { args: ['trust', 'draft', '--key', `k1=${key}.pub`, '--threshold', '1', '--serial', '2', '--out', out('policy.json')], path: out('policy.json') },
      { args: ['trust', 'sign', pkgs.v1, '--key', `${key}.key`, '--out', out('policy.sig')], path: out('policy.sig') },
      { args: ['receipt', '--store', join(root, 'store'), '--out', out('receipt.json')], path: out('receipt.json') },
    ];
    await mkdir(join(root, 'out'), { recursive: true });
    for (const c of cases) await writeFile(c.path, OLD);
    const runs = await Promise.all(cases.map((c) => airlockAsync(c.args, { env: c.env, timeoutMs: 120_000 })));
    for (const [i, r] of runs.entries()) {
      const c = cases[i]!;
      const what = c.args.slice(0, 2).join(' ');
      expect(r.status, `${what}: ${r.stderr}`).toBe(2);
      expect(r.stderr, what).toMatch(new RegExp(`${c.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} already exists; .*\\[${c.code ?? 'AIRLOCK_EXISTS'}\\]`));
      expect(await readFile(c.path, 'utf8'), what).toBe(OLD);
    }
  });

  it('the --help of every command that writes a file states the rule', async () => {
    for (const name of ['keygen', 'pack', 'delta', 'fetch', 'trust']) {
      const usage = (await COMMANDS[name]!()).default.usage;
      expect(usage, name).toMatch(
        /never (replaced|overwrites an existing file|replace their --out)[^]*exit\s+2\s+\(AIRLOCK_EXISTS\),\s+like every output\s+of\s+every\s+command/i,
      );
    }
    expect((await COMMANDS.receipt!()).default.usage).toMatch(/--force\s+replace FILE[^]*2 usage, no such store, or FILE refused \(exists/);
  });
});
