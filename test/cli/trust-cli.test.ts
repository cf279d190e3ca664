import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock } from '../helpers/bin.js';
import { keyArgs, siteAndSigners, storeDigest } from '../store/trust-helpers.js';

/** The trust policy commands as a security officer runs them: trust, sign, verify --store, import, audit. */
let dir: string;
let S: string;
const run = (args: string[]) => airlock(args, { cwd: dir });
const json = (args: string[]) => {
  const r = run([...args, '--json']);
  return { ...r, doc: JSON.parse(r.stdout || '{}') as Record<string, unknown> };
};

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-trust-cli-'));
  S = join(dir, 'S');
  siteAndSigners(dir);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('trust and audit on the command line (trust policy, several signers)', () => {
  it('2-of-3: one signer refused (exit 4 naming the rule), two accepted; verify --store agrees; audit verifies', async () => {
    const init = json(['trust', 'init', '--store', S, ...keyArgs('alice', 'bob', 'carol'), '--threshold', '2', '--identity', 'plant-a']);
    expect(init.status, init.stderr).toBe(0);
    expect(init.doc).toMatchObject({ ok: true, serial: 1, identity: 'plant-a', threshold: { default: 2 } });
    expect(run(['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', 'v1', '--sign-key', 'a.key', '--out', 'out']).status).toBe(0);
    const pkg = join(dir, 'out', 'docs.example.com-v1.airlock');

    const v1 = json(['verify', pkg, '--store', S]);
    expect(v1.status).toBe(4);
    expect(v1.doc).toMatchObject({ ok: false, code: 'AIRLOCK_THRESHOLD' });
    const before = await storeDigest(S);
    const refused = run(['import', pkg, '--store', S]);
    expect(refused.status).toBe(4);
    expect(refused.stderr).toContain('[AIRLOCK_THRESHOLD]');
    expect(await storeDigest(S)).toBe(before);

    expect(json(['sign', pkg, '--key', 'b.key']).doc).toMatchObject({ added: true, signatures: 2 });
    const v2 = json(['verify', pkg, '--store', S]);
    expect(v2.status, v2.stderr).toBe(0);
    expect(v2.doc).toMatchObject({ ok: true, decision: { rule: 'policy', need: 2, signerNames: ['alice', 'bob'], policySerial: 1 } });
    const imp = json(['import', pkg, '--store', S, '--activate', '--no-precompress']);
    expect(imp.status, imp.stderr).toBe(0);
    expect((imp.doc.signers as string[]).sort()).toEqual((v2.doc.signers as string[]).sort());

    const show = json(['audit', 'show', '--store', S]);
    expect((show.doc.lines as { outcome: string; reason: string | null }[]).map((l) => [l.outcome, l.reason])).toEqual([
      ['policy-init', null],
      ['refused', 'AIRLOCK_THRESHOLD'],
      ['imported', null],
      ['activated', null],
    ]);
    expect(json(['audit', 'verify', '--store', S]).doc).toMatchObject({ ok: true, lines: 4 });
    expect(json(['trust', 'show', '--store', S]).doc).toMatchObject({ serial: 1, chain: { ok: true, serials: [1] } });
  });

  it('a package for another store is refused by name; --allow-downgrade overrides it and is audited', async () => {
    expect(
      run(['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', 'v0', '--sign-key', 'a.key', '--audience', 'plant-b', '--out', 'out']).status,
    ).toBe(0);
    const other = join(dir, 'out', 'docs.example.com-v0.airlock');
    expect(run(['sign', other, '--key', 'c.key']).status).toBe(0);
    const r = run(['import', other, '--store', S]);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('[AIRLOCK_AUDIENCE]');
    const forced = json(['import', other, '--store', S, '--allow-downgrade', '--no-precompress']);
    expect(forced.status, forced.stderr).toBe(0);
    expect(forced.doc.overridden).toEqual(['AIRLOCK_AUDIENCE']);
    const last = (json(['audit', 'show', '--store', S, '--last', '1']).doc.lines as { reason: string; detail: string }[])[0]!;
    expect(last.reason).toBe('AIRLOCK_ALLOW_DOWNGRADE');
    expect(last.detail).toContain('AIRLOCK_AUDIENCE');
  });

  it('rotation: draft, sign by two current keys, rotate; too few signers refused', async () => {
    expect(run(['trust', 'draft', '--key', 'bob=b.pub', '--key', 'dave=d.pub', '--threshold', '1', '--serial', '2', '--out', 'p2.json']).status).toBe(0);
    expect(run(['trust', 'sign', 'p2.json', '--key', 'a.key', '--out', 'p2.a.sig']).status).toBe(0);
    const few = run(['trust', 'rotate', '--store', S, '--policy', 'p2.json', '--sig', 'p2.a.sig']);
    expect(few.status).toBe(4);
    expect(few.stderr).toContain('[AIRLOCK_POLICY_THRESHOLD]');
    // openssl makes the same raw signature airlock trust sign does.
    execFileSync('openssl', ['pkeyutl', '-sign', '-inkey', 'b.key', '-rawin', '-in', 'p2.json', '-out', 'p2.b.sig'], { cwd: dir });
    const ok = json(['trust', 'rotate', '--store', S, '--policy', 'p2.json', '--sig', 'p2.a.sig', '--sig', 'p2.b.sig']);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.doc).toMatchObject({ previous: 1, serial: 2, signers: ['alice', 'bob'] });
    expect(json(['trust', 'show', '--store', S]).doc).toMatchObject({ serial: 2, chain: { ok: true, serials: [1, 2] } });
  });

  it('usage mistakes are exit 2 naming them; nothing is installed', () => {
    const r = run(['trust', 'init', '--store', join(dir, 'S2'), '--key', 'alice=a.pub', '--threshold', '2']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('threshold.default is 2 but the policy has only 1 keys');
    expect(existsSync(join(dir, 'S2'))).toBe(false);
    expect(run(['sign', 'nothing.airlock']).status).toBe(2); // no --key
    expect(run(['trust', 'frobnicate']).status).toBe(2);
    expect(run(['audit', 'show', '--store', S, 'extra']).status).toBe(2);
  });

  it('audit verify exits 4 on an edited line', async () => {
    const log = join(S, 'audit.log');
    const text = await readFile(log, 'utf8');
    await writeFile(log, text.replace('"refused"', '"imported"'));
    const r = json(['audit', 'verify', '--store', S]);
    expect(r.status).toBe(4);
    expect(r.doc).toMatchObject({ ok: false, code: 'AIRLOCK_AUDIT_BROKEN' });
    await writeFile(log, text);
    expect(run(['audit', 'verify', '--store', S]).status).toBe(0);
  });
});
