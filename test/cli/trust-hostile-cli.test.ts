import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, readFile, readdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock, airlockAsync } from '../helpers/bin.js';
import { scratch } from '../helpers/scratch.js';
import { keyArgs, siteAndSigners, storeDigest } from '../store/trust-helpers.js';
import { POLICY_BOUNDS, envelope } from '../../src/store/policy.js';

/**
 * Hostile stores, keys and policy documents against the trust commands, as a security officer
 * would try them: every refusal is a stable code, names the file, changes nothing, and never
 * prints key material, errno names, OpenSSL or V8 text, or the content of a file it refused.
 */
let dir: string;
const run = (args: string[]) => airlock(args, { cwd: dir, timeoutMs: 20_000 });
const json = (args: string[]) => {
  const r = run([...args, '--json']);
  return { ...r, doc: JSON.parse(r.stdout || '{}') as Record<string, unknown> };
};
let n = 0;
const paths = scratch(() => dir);
/** A fresh store with a 1-of-2 policy (alice, bob); `identity` when given (trust init once per kind, then copies). */
function freshStore(o: { identity?: string; threshold?: number } = {}): string {
  return paths.copied(`policy-${o.threshold ?? 1}-${o.identity ?? 'any'}`, (s) => {
    const r = run([
      'trust',
      'init',
      '--store',
      s,
      ...keyArgs('alice', 'bob'),
      '--threshold',
      String(o.threshold ?? 1),
      ...(o.identity ? ['--identity', o.identity] : []),
    ]);
    expect(r.status, r.stderr).toBe(0);
  });
}
const policyOf = (s: string) => join(s, 'trust', 'policy.json');
const chainOf = (s: string, serial: number) => join(s, 'trust', 'chain', `${String(serial).padStart(8, '0')}.json`);
/** Rotate store `s` to a policy with serial `serial` (alice, bob, carol; threshold 1), signed by alice. */
function rotate(s: string, serial: number, extra: string[] = []): ReturnType<typeof run> {
  const out = `p${++n}.json`;
  expect(run(['trust', 'draft', ...keyArgs('alice', 'bob', 'carol'), '--threshold', '1', '--serial', String(serial), '--out', out, ...extra]).status).toBe(0);
  expect(run(['trust', 'sign', out, '--key', 'a.key', '--out', `${out}.sig`]).status).toBe(0);
  return run(['trust', 'rotate', '--store', s, '--policy', out, '--sig', `${out}.sig`]);
}
/** Words a message for a person must never carry. */
function plainWords(text: string): void {
  expect(text).not.toMatch(/\bE[A-Z]{3,}\b(?<!\bEXPIRED\b)|error:[0-9A-F]{8}|DECODER|routines::|Unexpected token|is not valid JSON: |BEGIN [A-Z ]*KEY/);
}
/** A refusal: exit `status`, the bracketed `code` on stderr, and the store byte for byte as before. */
async function refusedUnchanged(s: string, args: string[], status: number, code: string): Promise<ReturnType<typeof run>> {
  const before = await storeDigest(s);
  const r = run(args);
  expect(r.status, r.stderr).toBe(status);
  expect(r.stderr).toContain(`[${code}]`);
  plainWords(r.stderr);
  expect(await storeDigest(s)).toBe(before);
  return r;
}

let alicePkg: string; // signed by alice (in every policy here)
let outsiderPkg: string; // signed by dave (in no policy)
let plantA: string; // --audience plant-a, signed by alice

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-trust-hostile-'));
  siteAndSigners(dir);
  const pack = (label: string, key: string, extra: string[] = []) => {
    const r = run(['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', label, '--sign-key', key, '--out', 'out', ...extra]);
    expect(r.status, r.stderr).toBe(0);
    return join(dir, 'out', `docs.example.com-${label}.airlock`);
  };
  alicePkg = pack('v1', 'a.key');
  outsiderPkg = pack('v2', 'd.key');
  plantA = pack('v3', 'a.key', ['--audience', 'plant-a']);
}, 60_000);
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('private key where a public key belongs', () => {
  it('trust init --key NAME=PRIVATE.key is refused (exit 2 naming the file) and nothing is written', () => {
    const s = join(dir, 'priv-init');
    const r = run(['trust', 'init', '--store', s, '--key', 'alice=a.key', '--threshold', '1']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('a.key holds a private key');
    plainWords(r.stderr);
    expect(existsSync(s)).toBe(false);
    const d = run(['trust', 'draft', '--key', 'alice=a.key', '--threshold', '1', '--serial', '2', '--out', 'priv-draft.json']);
    expect(d.status).toBe(2);
    expect(existsSync(join(dir, 'priv-draft.json'))).toBe(false);
  });

  it('a public key file with a private key riding after it is refused everywhere a public key is taken', async () => {
    await writeFile(join(dir, 'both.pub'), (await readFile(join(dir, 'a.pub'), 'utf8')) + (await readFile(join(dir, 'a.key'), 'utf8')));
    const s = freshStore();
    for (const args of [
      ['trust', 'init', '--store', join(dir, 'both-init'), '--key', 'alice=both.pub', '--threshold', '1'],
      ['import', alicePkg, '--trust', 'a.key', '--store', join(dir, 'flat-priv')],
      ['verify', alicePkg, '--trust', 'a.key'],
      ['verify', alicePkg, '--trust', 'both.pub'],
    ]) {
      const r = run(args);
      expect(r.status, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain('holds a private key');
      plainWords(r.stderr);
    }
    expect(existsSync(join(dir, 'both-init'))).toBe(false);
    expect(existsSync(join(dir, 'flat-priv'))).toBe(false);
    void s;
  });

  it('every key written into a store is the SPKI PEM public key alone (re-exported), mode 0644 files hold no private key', async () => {
    const s = freshStore();
    // A .pub with CRLF line ends and a comment line around it: accepted, but written canonically.
    const pub = await readFile(join(dir, 'c.pub'), 'utf8');
    await writeFile(join(dir, 'crlf.pub'), pub.replace(/\n/g, '\r\n'));
    const s2 = join(dir, 'crlf-store');
    expect(run(['trust', 'init', '--store', s2, '--key', 'carol=crlf.pub', '--threshold', '1']).status).toBe(0);
    for (const store of [s, s2]) {
      for (const f of [policyOf(store), chainOf(store, 1)]) {
        const text = await readFile(f, 'utf8');
        expect(text).not.toContain('PRIVATE');
        const inner = JSON.parse((JSON.parse(text) as { policy: string }).policy) as { keys: Record<string, { publicKey: string }> };
        for (const k of Object.values(inner.keys)) expect(k.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----\n[A-Za-z0-9+/=\n]+-----END PUBLIC KEY-----\n$/);
      }
    }
    expect(JSON.parse(JSON.parse(await readFile(policyOf(s2), 'utf8')).policy).keys.carol.publicKey).toBe(pub);
  });

  it('a policy document carrying a private key is refused by trust rotate (exit 4 AIRLOCK_BAD_POLICY); the key is never printed', async () => {
    const s = freshStore();
    expect(run(['trust', 'draft', '--key', 'alice=a.pub', '--threshold', '1', '--serial', '2', '--out', 'rot-priv.json']).status).toBe(0);
    const doc = JSON.parse(await readFile(join(dir, 'rot-priv.json'), 'utf8'));
    doc.keys.alice.publicKey = await readFile(join(dir, 'a.key'), 'utf8');
    await writeFile(join(dir, 'rot-priv.json'), JSON.stringify(doc, null, 2));
    expect(run(['trust', 'sign', 'rot-priv.json', '--key', 'a.key', '--out', 'rot-priv.sig']).status).toBe(0);
    const r = await refusedUnchanged(s, ['trust', 'rotate', '--store', s, '--policy', 'rot-priv.json', '--sig', 'rot-priv.sig'], 4, 'AIRLOCK_BAD_POLICY');
    expect(r.stderr).toContain('holds a private key');
  });

  it('a --sig file that is not a raw 64-byte signature (63 bytes) is named as malformed by trust rotate (exit 2), never counted silently as no signature', async () => {
    const s = freshStore();
    expect(run(['trust', 'draft', '--key', 'alice=a.pub', '--threshold', '1', '--serial', '2', '--out', 'short-sig.json']).status).toBe(0);
    expect(run(['trust', 'sign', 'short-sig.json', '--key', 'a.key', '--out', 'short-sig.sig']).status).toBe(0);
    await writeFile(join(dir, 'short-sig.sig'), (await readFile(join(dir, 'short-sig.sig'))).subarray(0, 63));
    const r = await refusedUnchanged(s, ['trust', 'rotate', '--store', s, '--policy', 'short-sig.json', '--sig', 'short-sig.sig'], 2, 'AIRLOCK_BAD_SIGNATURE');
    expect(r.stderr).toContain('short-sig.sig is 63 bytes, not a raw 64-byte Ed25519 signature');
  });

  it('a store whose policy file holds a private key is refused on read (import, verify --store, trust show)', async () => {
    const s = freshStore();
    const text = JSON.parse(await readFile(policyOf(s), 'utf8')) as { policy: string };
    const inner = JSON.parse(text.policy);
    inner.keys.alice.publicKey = await readFile(join(dir, 'a.key'), 'utf8');
    const forged = envelope(Buffer.from(JSON.stringify(inner, null, 2) + '\n'), []);
    await writeFile(policyOf(s), forged);
    await writeFile(chainOf(s, 1), forged);
    for (const args of [
      ['import', alicePkg, '--store', s],
      ['verify', alicePkg, '--store', s],
      ['trust', 'show', '--store', s],
    ]) {
      const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_BAD_POLICY');
      expect(r.stderr).toContain('holds a private key');
      expect(r.stderr).toContain('00000001.json');
    }
  });
});

describe('trust quietly downgraded', () => {
  it('policy.json deleted: a package signed only by a key outside the policy is refused, even with --trust (AIRLOCK_POLICY_BROKEN naming the file)', async () => {
    const s = freshStore();
    await rm(policyOf(s));
    for (const args of [
      ['import', outsiderPkg, '--store', s, '--trust', 'd.pub'],
      ['import', alicePkg, '--store', s],
      ['verify', outsiderPkg, '--store', s, '--trust', 'd.pub'],
      ['trust', 'show', '--store', s],
    ]) {
      const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_POLICY_BROKEN');
      expect(r.stderr).toContain('policy.json is missing');
    }
    // Nor can a new root of trust be installed over what is left of the old one.
    const init = await refusedUnchanged(s, ['trust', 'init', '--store', s, '--key', 'dave=d.pub', '--threshold', '1'], 4, 'AIRLOCK_POLICY_BROKEN');
    expect(init.stderr).toContain('policy.json');
    const show = json(['trust', 'show', '--store', s]);
    expect(show.doc).toMatchObject({ ok: false, code: 'AIRLOCK_POLICY_BROKEN', subject: policyOf(s) });
  });

  it('the whole chain deleted, policy.json kept: refused; an emptied chain with no policy.json: refused', async () => {
    const s = freshStore();
    await rm(join(s, 'trust', 'chain'), { recursive: true });
    await refusedUnchanged(s, ['import', alicePkg, '--store', s], 4, 'AIRLOCK_POLICY_BROKEN');
    const s2 = freshStore();
    await rm(chainOf(s2, 1));
    await rm(policyOf(s2));
    await refusedUnchanged(s2, ['import', outsiderPkg, '--store', s2, '--trust', 'd.pub'], 4, 'AIRLOCK_POLICY_BROKEN');
  });

  it('the whole trust/ folder deleted: the audit log remembers the trust init, so --trust does not take over', async () => {
    const s = freshStore();
    await rm(join(s, 'trust'), { recursive: true });
    for (const args of [
      ['import', outsiderPkg, '--store', s, '--trust', 'd.pub'],
      ['verify', outsiderPkg, '--store', s, '--trust', 'd.pub'],
      ['trust', 'init', '--store', s, '--key', 'dave=d.pub', '--threshold', '1'],
    ]) {
      const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_POLICY_BROKEN');
      expect(r.stderr).toContain('the audit log records a trust init');
    }
  });

  it('the trust/ folder and the audit log both deleted from a store that holds versions: --trust does not take over, audit verify does not say OK', async () => {
    const s = freshStore();
    expect(run(['import', alicePkg, '--store', s]).status).toBe(0);
    for (const f of ['trust', 'audit.log', 'audit.head']) await rm(join(s, f), { recursive: true });
    for (const args of [
      ['import', outsiderPkg, '--store', s, '--trust', 'd.pub'],
      ['trust', 'init', '--store', s, '--key', 'dave=d.pub', '--threshold', '1'],
    ]) {
      const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_AUDIT_BROKEN');
      expect(r.stderr).toContain('the store holds versions');
    }
    const v = run(['audit', 'verify', '--store', s]);
    expect(v.status).toBe(4);
    expect(v.stdout + v.stderr).toContain('the log was removed');
  });

  it('rollback of the policy: the newest chain entry deleted and policy.json set back to the root brings no retired key back (the audit log records the rotation)', async () => {
    const s = freshStore();
    // Policy 2 retires alice: only bob, signed by alice under policy 1's threshold of 1.
    expect(run(['trust', 'draft', '--key', 'bob=b.pub', '--threshold', '1', '--serial', '2', '--out', 'retire-alice.json']).status).toBe(0);
    expect(run(['trust', 'sign', 'retire-alice.json', '--key', 'a.key', '--out', 'retire-alice.sig']).status).toBe(0);
    expect(run(['trust', 'rotate', '--store', s, '--policy', 'retire-alice.json', '--sig', 'retire-alice.sig']).status).toBe(0);
    await refusedUnchanged(s, ['import', alicePkg, '--store', s], 4, 'AIRLOCK_THRESHOLD');
    await rm(chainOf(s, 2));
    await cp(chainOf(s, 1), policyOf(s));
    for (const args of [
      ['import', alicePkg, '--store', s],
      ['verify', alicePkg, '--store', s],
      ['trust', 'show', '--store', s],
    ]) {
      const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_POLICY_BROKEN');
      expect(r.stderr).toContain('the audit log records policy 2 as accepted, but the chain ends at 1');
    }
  });

  it('edited, deleted or renumbered chain entries are seen by trust show, import, verify --store and trust rotate', async () => {
    const base = freshStore();
    expect(rotate(base, 2).status).toBe(0);
    expect(json(['trust', 'show', '--store', base]).doc).toMatchObject({ ok: true, chain: { ok: true, serials: [1, 2] } });
    // A rotation to serial 3, signed by alice (live in policy 2): it would be accepted by an intact store.
    expect(run(['trust', 'draft', '--key', 'alice=a.pub', '--threshold', '1', '--serial', '3', '--out', 'p3.json']).status).toBe(0);
    expect(run(['trust', 'sign', 'p3.json', '--key', 'a.key', '--out', 'p3.json.sig']).status).toBe(0);
    const variants: [string, (s: string) => Promise<void>, string][] = [
      ['root deleted', (s) => rm(chainOf(s, 1)), '00000001.json is missing'],
      ['last entry deleted', (s) => rm(chainOf(s, 2)), 'differs from'],
      ['gap: 2 renamed 3', (s) => rename(chainOf(s, 2), chainOf(s, 3)), '00000002.json is missing'],
      [
        'entry 2 edited (threshold), policy.json alike',
        async (s) => {
          const e = JSON.parse(await readFile(chainOf(s, 2), 'utf8')) as { policy: string };
          const edited = envelope(Buffer.from(e.policy.replace(/"default": 1/, '"default": 2')), []);
          await writeFile(chainOf(s, 2), edited);
          await writeFile(policyOf(s), edited);
        },
        'was not accepted by policy 1',
      ],
      ['policy.json replaced by the root', (s) => cp(chainOf(s, 1), policyOf(s)), 'differs from'],
    ];
    for (const [what, breakIt, words] of variants) {
      const s = join(dir, `broken-${++n}`);
      await cp(base, s, { recursive: true });
      await breakIt(s);
      for (const args of [
        ['trust', 'show', '--store', s],
        ['import', alicePkg, '--store', s],
        ['verify', alicePkg, '--store', s],
      ]) {
        const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_POLICY_BROKEN');
        expect(r.stderr, what).toContain(words);
      }
      await refusedUnchanged(s, ['trust', 'rotate', '--store', s, '--policy', 'p3.json', '--sig', 'p3.json.sig'], 4, 'AIRLOCK_POLICY_BROKEN');
    }
  }, 180_000);

  it('the root policy rewritten in place (threshold 2 -> 1, chain and policy.json alike, audit log untouched): the digest the audit log recorded catches it', async () => {
    const s = freshStore({ threshold: 2 });
    await refusedUnchanged(s, ['import', alicePkg, '--store', s], 4, 'AIRLOCK_THRESHOLD');
    for (const f of [chainOf(s, 1), policyOf(s)]) {
      const e = JSON.parse(await readFile(f, 'utf8')) as { policy: string; signatures: string[] };
      await writeFile(
        f,
        envelope(
          Buffer.from(e.policy.replace(/"default": 2/, '"default": 1')),
          e.signatures.map((x) => Buffer.from(x, 'base64')),
        ),
      );
    }
    for (const args of [
      ['import', alicePkg, '--store', s],
      ['verify', alicePkg, '--store', s],
      ['trust', 'show', '--store', s],
    ]) {
      const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_POLICY_BROKEN');
      expect(r.stderr).toMatch(/00000001\.json is not the policy the audit log recorded as accepted \(policy 1, sha256 [0-9a-f]{12}/);
    }
    // A rotation, rewritten in place after it was accepted, is caught the same way.
    const t = freshStore();
    expect(rotate(t, 2).status).toBe(0);
    for (const f of [chainOf(t, 2), policyOf(t)]) {
      const e = JSON.parse(await readFile(f, 'utf8')) as { policy: string; signatures: string[] };
      await writeFile(
        f,
        envelope(
          Buffer.from(e.policy.replace('"carol"', '"carla"')),
          e.signatures.map((x) => Buffer.from(x, 'base64')),
        ),
      );
    }
    const r = await refusedUnchanged(t, ['trust', 'show', '--store', t], 4, 'AIRLOCK_POLICY_BROKEN');
    expect(r.stderr).toMatch(/00000002\.json (is not the policy the audit log recorded|was not accepted by policy 1)/);
  });

  it('the audit log deleted with the root rewritten (threshold 2 -> 1): a policy the log does not record is refused, so the log cannot be dropped to hide the edit', async () => {
    const s = freshStore({ threshold: 2 });
    for (const f of [chainOf(s, 1), policyOf(s)]) {
      const e = JSON.parse(await readFile(f, 'utf8')) as { policy: string; signatures: string[] };
      await writeFile(f, envelope(Buffer.from(e.policy.replace(/"default": 2/, '"default": 1')), []));
    }
    await rm(join(s, 'audit.log'));
    await rm(join(s, 'audit.head'));
    for (const args of [
      ['import', alicePkg, '--store', s],
      ['trust', 'show', '--store', s],
    ]) {
      const r = await refusedUnchanged(s, args, 4, 'AIRLOCK_AUDIT_BROKEN');
      expect(r.stderr).toContain('audit.log is missing but the store holds trust records (the log was removed)');
    }
  });

  it('a rotation that skips a serial is refused (a chain has no gaps)', async () => {
    const s = freshStore();
    const r = rotate(s, 3);
    expect(r.status).toBe(4);
    expect(r.stderr).toContain('[AIRLOCK_POLICY_SERIAL]');
    expect(json(['trust', 'show', '--store', s]).doc).toMatchObject({ serial: 1, chain: { serials: [1] } });
  });
});

describe('audience and expiry', () => {
  it('mix-up: a package addressed to plant-a is refused by a policy store without identity and by a store without policy (AIRLOCK_AUDIENCE)', async () => {
    const s = freshStore();
    const r = await refusedUnchanged(s, ['import', plantA, '--store', s], 4, 'AIRLOCK_AUDIENCE');
    expect(r.stderr).toContain('has no identity');
    const v = json(['verify', plantA, '--store', s]);
    expect(v.doc).toMatchObject({ ok: false, code: 'AIRLOCK_AUDIENCE' });
    const flat = join(dir, 'flat-audience');
    const f = run(['import', plantA, '--store', flat, '--trust', 'a.pub']);
    expect(f.status).toBe(4);
    expect(f.stderr).toContain('[AIRLOCK_AUDIENCE]');
    // The named store takes it; --allow-downgrade overrides the rule elsewhere, and says so in the audit log.
    const named = freshStore({ identity: 'plant-a' });
    expect(run(['import', plantA, '--store', named, '--no-precompress']).status).toBe(0);
    const forced = json(['import', plantA, '--store', s, '--allow-downgrade', '--no-precompress']);
    expect(forced.status, forced.stderr).toBe(0);
    expect(forced.doc.overridden).toEqual(['AIRLOCK_AUDIENCE']);
    expect(await readFile(join(s, 'audit.log'), 'utf8')).toContain('AIRLOCK_ALLOW_DOWNGRADE');
  });

  it('trust init, draft and rotate refuse a key that has already expired (exit 2 naming the key)', async () => {
    const s = join(dir, 'expired-init');
    const r = run(['trust', 'init', '--store', s, '--key', 'alice=a.pub@2001-01-01T00:00:00Z', '--threshold', '1']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('key "alice" expires at 2001-01-01T00:00:00.000Z, which is not in the future');
    expect(existsSync(s)).toBe(false);
    expect(run(['trust', 'draft', '--key', 'alice=a.pub@2001-01-01T00:00:00Z', '--threshold', '1', '--serial', '2', '--out', 'exp.json']).status).toBe(2);
    // A document written by hand: the store refuses to install it.
    const live = freshStore();
    expect(run(['trust', 'draft', '--key', 'alice=a.pub@2999-01-01T00:00:00Z', '--threshold', '1', '--serial', '2', '--out', 'exp2.json']).status).toBe(0);
    await writeFile(join(dir, 'exp2.json'), (await readFile(join(dir, 'exp2.json'), 'utf8')).replace('2999-01-01', '2001-01-01'));
    expect(run(['trust', 'sign', 'exp2.json', '--key', 'a.key', '--out', 'exp2.sig']).status).toBe(0);
    const rot = await refusedUnchanged(live, ['trust', 'rotate', '--store', live, '--policy', 'exp2.json', '--sig', 'exp2.sig'], 2, 'AIRLOCK_USAGE');
    expect(rot.stderr).toContain('key "alice" expires at 2001-01-01');
    // A key still live is accepted.
    expect(run(['trust', 'init', '--store', s, '--key', 'alice=a.pub@2999-01-01T00:00:00Z', '--threshold', '1']).status).toBe(0);
  });

  it('pack --expires-at in the past: refused (exit 2 naming the flag and the value), no package born expired', () => {
    const r = run([
      'pack',
      'site.tgz',
      '--domain',
      'docs.example.com',
      '--version-label',
      'old',
      '--expires-at',
      '2000-01-01T00:00:00Z',
      '--out',
      'expired-out',
    ]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('--expires-at "2000-01-01T00:00:00Z" is not in the future');
    expect(existsSync(join(dir, 'expired-out'))).toBe(false);
  });
});

describe('policy JSON parsing', () => {
  it('duplicate keys in a policy document (last one wins) are refused, in a rotation and in a stored policy', async () => {
    const s = freshStore();
    expect(run(['trust', 'draft', '--key', 'alice=a.pub', '--threshold', '1', '--serial', '2', '--out', 'dup.json']).status).toBe(0);
    const text = await readFile(join(dir, 'dup.json'), 'utf8');
    // A reviewer reads threshold 1 first; JSON.parse would keep the "identity" of the second.
    await writeFile(join(dir, 'dup.json'), text.replace('"identity": null,', '"identity": null,\n  "ident\\u0069ty": "plant-z",'));
    expect(run(['trust', 'sign', 'dup.json', '--key', 'a.key', '--out', 'dup.sig']).status).toBe(0);
    const r = await refusedUnchanged(s, ['trust', 'rotate', '--store', s, '--policy', 'dup.json', '--sig', 'dup.sig'], 4, 'AIRLOCK_BAD_POLICY');
    expect(r.stderr).toContain('names the key "identity" twice');
    // The store's own envelope with "policy" twice.
    const env = await readFile(policyOf(s), 'utf8');
    const doubled = env.replace('"policy":', '"policy": "x",\n  "policy":');
    await writeFile(policyOf(s), doubled);
    await writeFile(chainOf(s, 1), doubled);
    const imp = await refusedUnchanged(s, ['import', alicePkg, '--store', s], 4, 'AIRLOCK_BAD_POLICY');
    expect(imp.stderr).toContain('names the key "policy" twice');
  });

  it('one size limit and one depth limit, reported as AIRLOCK_BAD_POLICY naming the file', async () => {
    const s = freshStore();
    const big = join(dir, 'big.json');
    await writeFile(big, `{"pad": "${'A'.repeat(POLICY_BOUNDS.maxBytes)}"}`);
    const r = await refusedUnchanged(s, ['trust', 'rotate', '--store', s, '--policy', 'big.json'], 4, 'AIRLOCK_BAD_POLICY');
    expect(r.stderr).toContain(`big.json is ${POLICY_BOUNDS.maxBytes + 11} bytes, more than the limit of ${POLICY_BOUNDS.maxBytes}`);
    // The same limit for the store's file (the old reader allowed twice as much there).
    await cp(big, policyOf(s));
    const stored = await refusedUnchanged(s, ['import', alicePkg, '--store', s], 4, 'AIRLOCK_BAD_POLICY');
    expect(stored.stderr).toContain(`${policyOf(s)} is ${POLICY_BOUNDS.maxBytes + 11} bytes, more than the limit of ${POLICY_BOUNDS.maxBytes}`);
    await writeFile(join(dir, 'deep.json'), '['.repeat(50) + ']'.repeat(50));
    const deep = await refusedUnchanged(s, ['trust', 'rotate', '--store', s, '--policy', 'deep.json'], 4, 'AIRLOCK_BAD_POLICY');
    expect(deep.stderr).toContain(`deep.json nests deeper than ${POLICY_BOUNDS.maxDepth} levels`);
  });
});

describe('errors in plain words', () => {
  it('a policy.json that is a folder or a loop of symbolic links: exit 4 in words, no errno', async () => {
    const s = freshStore();
    await rm(policyOf(s));
    await mkdir(policyOf(s));
    const r = await refusedUnchanged(s, ['import', alicePkg, '--store', s], 4, 'AIRLOCK_BAD_POLICY');
    expect(r.stderr).toContain('policy.json is a folder');
    await rm(policyOf(s), { recursive: true });
    await symlink(policyOf(s), policyOf(s));
    const loop = run(['trust', 'show', '--store', s]); // (the store digest cannot read a loop either)
    expect(loop.status).toBe(4);
    expect(loop.stderr).toContain('policy.json is a loop of symbolic links [AIRLOCK_BAD_POLICY]');
    plainWords(loop.stderr);
  });

  it('a policy symlinked to a secret file: its content is never echoed in a JSON error', async () => {
    const secret = join(dir, 'passwd');
    await writeFile(secret, 'root:x:0:0:SECRET-LINE-4711:/root:/bin/bash\n');
    const s = freshStore();
    for (const f of [policyOf(s), chainOf(s, 1)]) {
      await rm(f);
      await symlink(secret, f);
    }
    const r = await refusedUnchanged(s, ['import', alicePkg, '--store', s], 4, 'AIRLOCK_BAD_POLICY');
    expect(r.stderr).toContain('is not valid JSON');
    const rot = run(['trust', 'rotate', '--store', s, '--policy', 'passwd', '--json']);
    expect(rot.status).toBe(4);
    for (const out of [r.stderr, r.stdout, rot.stdout, rot.stderr]) expect(out).not.toContain('SECRET-LINE');
  });

  it('trust show on a broken chain: exit 4 with its bracketed code', async () => {
    const s = freshStore();
    await rm(chainOf(s, 1));
    const r = await refusedUnchanged(s, ['trust', 'show', '--store', s], 4, 'AIRLOCK_POLICY_BROKEN');
    expect(r.stderr).toContain('00000001.json');
  });

  it('--domain-threshold without =N is exit 2, not ignored', () => {
    const s = join(dir, 'dt');
    const r = run(['trust', 'init', '--store', s, '--key', 'alice=a.pub', '--threshold', '1', '--domain-threshold', 'docs.example.com']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain('--domain-threshold takes D=N');
    expect(run(['trust', 'init', '--store', s, '--key', 'alice=a.pub', '--threshold', '1', '--domain-threshold', 'docs.example.com=']).status).toBe(2);
    expect(existsSync(s)).toBe(false);
  });

  it('a missing key file, a public key as --sign-key, a private key as --trust: plain words naming the file', () => {
    const missing = run(['verify', alicePkg, '--trust', 'nope.pub']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('nope.pub does not exist');
    plainWords(missing.stderr);
    const pub = run(['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', 'pubkey', '--sign-key', 'a.pub', '--out', 'pubkey-out']);
    expect(pub.status).toBe(2);
    expect(pub.stderr).toContain('a.pub holds a public key; --sign-key needs the private .key file');
    plainWords(pub.stderr);
    const sign = run(['sign', alicePkg, '--key', 'b.pub']);
    expect(sign.status).toBe(2);
    expect(sign.stderr).toContain('b.pub holds a public key; --key needs the private .key file');
    const init = run(['trust', 'init', '--store', join(dir, 'missing-key'), '--key', 'alice=nope.pub', '--threshold', '1']);
    expect(init.status).toBe(2);
    expect(init.stderr).toContain('nope.pub does not exist');
    plainWords(init.stderr);
    const junk = run(['trust', 'init', '--store', join(dir, 'junk-key'), '--key', 'alice=site.tgz', '--threshold', '1']);
    expect(junk.status).toBe(2);
    expect(junk.stderr).toContain('site.tgz is not a PEM public key');
    plainWords(junk.stderr);
  });
});

describe('FIFOs never hang', () => {
  const fifo = (path: string) => execFileSync('mkfifo', [path]);

  it('a FIFO as policy.json, as a chain entry, or as a key file is refused at once in words', async () => {
    const s = freshStore();
    const pol = await readFile(policyOf(s));
    await rm(policyOf(s));
    fifo(policyOf(s));
    const a = await airlockAsync(['import', alicePkg, '--store', s], { cwd: dir, timeoutMs: 15_000 });
    expect(a.signal).toBeNull();
    expect(a.status, a.stderr).toBe(4);
    expect(a.stderr).toContain('policy.json is a FIFO (named pipe), not a regular file [AIRLOCK_BAD_POLICY]');
    await rm(policyOf(s));
    await writeFile(policyOf(s), pol);
    await rm(chainOf(s, 1));
    fifo(chainOf(s, 1));
    const c = await airlockAsync(['trust', 'show', '--store', s], { cwd: dir, timeoutMs: 15_000 });
    expect(c.status, c.stderr).toBe(4);
    expect(c.stderr).toContain('00000001.json is a FIFO');
    fifo(join(dir, 'fifo.pub'));
    const runs = await Promise.all(
      [
        ['verify', alicePkg, '--trust', 'fifo.pub'],
        ['trust', 'init', '--store', join(dir, 'fifo-init'), '--key', 'alice=fifo.pub', '--threshold', '1'],
        ['sign', alicePkg, '--key', 'fifo.pub'],
        ['trust', 'rotate', '--store', s, '--policy', 'fifo.pub'],
      ].map((args) => airlockAsync(args, { cwd: dir, timeoutMs: 15_000 })),
    );
    for (const r of runs) {
      expect(r.signal).toBeNull();
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain('fifo.pub is a FIFO (named pipe), not a regular file');
    }
    expect((await readdir(dir)).includes('fifo-init')).toBe(false);
  }, 60_000);
});

describe('downgrade protection quietly switched off', () => {
  it('seen.json deleted: an older package of a domain the audit log records as imported is refused (AIRLOCK_BAD_SEEN), unless the order rule is waived', async () => {
    const s = join(dir, 'seen-deleted');
    expect(run(['import', outsiderPkg, '--store', s, '--trust', 'd.pub']).status).toBe(0);
    await refusedUnchanged(s, ['import', alicePkg, '--store', s, '--trust', 'a.pub'], 4, 'AIRLOCK_DOWNGRADE');
    await rm(join(s, 'trust', 'seen.json'));
    const r = await refusedUnchanged(s, ['import', alicePkg, '--store', s, '--trust', 'a.pub'], 4, 'AIRLOCK_BAD_SEEN');
    expect(r.stderr).toContain('has no order for docs.example.com, yet the audit log records its import');
    // The operator's explicit waiver still works, and its line names the rule it overrode.
    expect(run(['import', alicePkg, '--store', s, '--trust', 'a.pub', '--allow-downgrade']).status).toBe(0);
    const last = (await readFile(join(s, 'audit.log'), 'utf8')).trim().split('\n').at(-1)!;
    expect(JSON.parse(last)).toMatchObject({
      outcome: 'imported',
      reason: 'AIRLOCK_ALLOW_DOWNGRADE',
      detail: expect.stringContaining('--allow-downgrade overrode AIRLOCK_BAD_SEEN'),
    });
  });

  it('seen.json damaged: verify --store answers as import does for a package already in the store (AIRLOCK_BAD_SEEN, exit 4)', async () => {
    const s = join(dir, 'seen-damaged-verify');
    expect(run(['import', alicePkg, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    const seenPath = join(s, 'trust', 'seen.json');
    const seen = JSON.parse(await readFile(seenPath, 'utf8')) as { domains: Record<string, { sequence: unknown }> };
    seen.domains['docs.example.com']!.sequence = null;
    await writeFile(seenPath, JSON.stringify(seen));
    const verify = run(['verify', alicePkg, '--store', s, '--trust', 'a.pub']);
    const imp = run(['import', alicePkg, '--store', s, '--trust', 'a.pub']);
    expect([verify.status, imp.status]).toEqual([4, 4]);
    for (const r of [verify, imp]) expect(r.stderr).toContain('[AIRLOCK_BAD_SEEN]');
    // A version that is no label (a line break forging a message line) is damage too.
    seen.domains['docs.example.com'] = { ...seen.domains['docs.example.com']!, sequence: 1, version: 'x\nairlock import: ok' } as { sequence: unknown };
    await writeFile(seenPath, JSON.stringify(seen));
    const forged = run(['import', alicePkg, '--store', s, '--trust', 'a.pub']);
    expect([forged.status, forged.stderr]).toEqual([4, expect.stringContaining('[AIRLOCK_BAD_SEEN]')]);
    expect(forged.stderr).not.toContain('\nairlock import: ok');
  });

  it('an import cut short after its commit, before its seen order: importing that package again with --allow-downgrade (as the refusal says) restores the order', async () => {
    const s = join(dir, 'seen-after-commit');
    expect(run(['import', outsiderPkg, '--store', s, '--trust', 'd.pub']).status).toBe(0);
    await rm(join(s, 'trust', 'seen.json')); // what a crash between the commit and the seen write leaves
    const refused = await refusedUnchanged(s, ['import', alicePkg, '--store', s, '--trust', 'a.pub'], 4, 'AIRLOCK_BAD_SEEN');
    expect(refused.stderr).toContain('import that package again with --allow-downgrade');
    const again = run(['import', outsiderPkg, '--store', s, '--trust', 'd.pub', '--allow-downgrade']);
    expect([again.status, again.stdout]).toEqual([0, expect.stringContaining('unchanged')]);
    // The order is back: the older package is refused as a downgrade, no longer for a missing order.
    await refusedUnchanged(s, ['import', alicePkg, '--store', s, '--trust', 'a.pub'], 4, 'AIRLOCK_DOWNGRADE');
  });

  it('the seen order lost: an older version in the store imported again never writes an order below the newest the log records', async () => {
    const s = join(dir, 'seen-older-again');
    expect(run(['import', alicePkg, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    expect(run(['import', outsiderPkg, '--store', s, '--trust', 'd.pub']).status).toBe(0);
    await rm(join(s, 'trust', 'seen.json'));
    // v1 (older than v2, which the log records) again: unchanged, and no seen order of v1's is written.
    const again = run(['import', alicePkg, '--store', s, '--trust', 'a.pub', '--allow-downgrade']);
    expect([again.status, again.stdout]).toEqual([0, expect.stringContaining('unchanged')]);
    expect(existsSync(join(s, 'trust', 'seen.json'))).toBe(false);
    // Nor does an older version new to the store, let in by the waiver.
    await rm(join(s, 'versions', 'v1'), { recursive: true });
    expect(run(['import', alicePkg, '--store', s, '--trust', 'a.pub', '--allow-downgrade']).stdout).toContain('imported');
    expect(existsSync(join(s, 'trust', 'seen.json'))).toBe(false);
    // The newest again restores it.
    expect(run(['import', outsiderPkg, '--store', s, '--trust', 'd.pub']).status).toBe(0);
    expect(JSON.parse(await readFile(join(s, 'trust', 'seen.json'), 'utf8'))).toMatchObject({ domains: { 'docs.example.com': { version: 'v2' } } });
  });

  it('seen.json removed after the newest version was pruned: that package imported again restores the order, as the refusal says, with no waiver', async () => {
    const s = join(dir, 'seen-pruned-newest');
    expect(run(['import', alicePkg, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    expect(run(['import', outsiderPkg, '--store', s, '--trust', 'd.pub']).status).toBe(0);
    expect(run(['activate', 'v1', '--store', s]).status).toBe(0);
    expect(run(['prune', '--keep', '0', '--store', s]).status).toBe(0);
    expect(existsSync(join(s, 'versions', 'v2'))).toBe(false);
    const seenPath = join(s, 'trust', 'seen.json');
    await writeFile(seenPath, '{"format":"airlock-seen/1","domains":{'); // any damage
    const damaged = await refusedUnchanged(s, ['import', outsiderPkg, '--store', s, '--trust', 'd.pub'], 4, 'AIRLOCK_BAD_SEEN');
    expect(damaged.stderr).toContain("or remove it and import each domain's newest package (or a newer one) again");
    await rm(seenPath);
    // The newest again (pruned, so a new import): accepted, and its order written back.
    const again = run(['import', outsiderPkg, '--store', s, '--trust', 'd.pub']);
    expect([again.status, again.stdout]).toEqual([0, expect.stringContaining('imported')]);
    expect(JSON.parse(await readFile(seenPath, 'utf8'))).toMatchObject({ domains: { 'docs.example.com': { version: 'v2' } } });
    expect(run(['audit', 'verify', '--store', s]).status).toBe(0);
  });

  it('seen.json damaged: verify DELTA --store answers as import of the delta does (AIRLOCK_BAD_SEEN, exit 4), and a delta to an older target is a downgrade for both', async () => {
    const s = join(dir, 'seen-damaged-delta');
    expect(run(['import', alicePkg, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    const d = run(['delta', alicePkg, outsiderPkg, '--out', 'deltas-seen', '--sign-key', 'd.key']);
    expect(d.status, d.stderr).toBe(0);
    const delta = join(dir, 'deltas-seen', 'docs.example.com-v2.delta.airlock');
    const seenPath = join(s, 'trust', 'seen.json');
    const good = await readFile(seenPath);
    await writeFile(seenPath, good.toString('utf8').replace(/"sequence": \d+/, '"sequence": null'));
    const verify = run(['verify', delta, '--store', s, '--trust', 'd.pub']);
    const imp = run(['import', delta, '--store', s, '--trust', 'd.pub']);
    expect([verify.status, imp.status]).toEqual([4, 4]);
    for (const r of [verify, imp]) expect(r.stderr).toContain('[AIRLOCK_BAD_SEEN]');
    // The store has seen a newer order than the delta's target: both refuse it as a downgrade.
    const raised = JSON.parse(good.toString('utf8')) as { domains: Record<string, { sequence: number }> };
    raised.domains['docs.example.com']!.sequence = Number.MAX_SAFE_INTEGER;
    await writeFile(seenPath, JSON.stringify(raised));
    const v2 = run(['verify', delta, '--store', s, '--trust', 'd.pub']);
    const i2 = run(['import', delta, '--store', s, '--trust', 'd.pub']);
    expect([v2.status, i2.status]).toEqual([4, 4]);
    for (const r of [v2, i2]) expect(r.stderr).toContain('[AIRLOCK_DOWNGRADE]');
    // Waived, verify says so.
    const waived = run(['verify', delta, '--store', s, '--trust', 'd.pub', '--allow-downgrade']);
    expect([waived.status, waived.stdout]).toEqual([0, expect.stringContaining('overriding AIRLOCK_DOWNGRADE')]);
  }, 60_000);

  /** Three packages of one domain, each packed after the one before (so in rising sequence), all signed by alice. */
  const ordered = (out: string) =>
    ['o1', 'o2', 'o3'].map((label) => {
      const r = run(['pack', 'site.tgz', '--domain', 'docs.example.com', '--version-label', label, '--sign-key', 'a.key', '--out', out]);
      expect(r.status, r.stderr).toBe(0);
      return join(dir, out, `docs.example.com-${label}.airlock`);
    });
  const auditLines = async (s: string) =>
    (await readFile(join(s, 'audit.log'), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { outcome: string; reason: string | null });

  it('an older seen record put back: a package between it and the newest import is refused (AIRLOCK_BAD_SEEN naming the domain and both sequences); only the refusal is logged', async () => {
    const [o1, o2, o3] = ordered('ordered-a');
    const s = join(dir, 'seen-older');
    const seenPath = join(s, 'trust', 'seen.json');
    expect(run(['import', o1!, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    const older = await readFile(seenPath);
    expect(run(['import', o3!, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    const newest = (JSON.parse(await readFile(seenPath, 'utf8')) as { domains: Record<string, { sequence: number }> }).domains['docs.example.com']!.sequence;
    const oldest = (JSON.parse(older.toString('utf8')) as { domains: Record<string, { sequence: number }> }).domains['docs.example.com']!.sequence;
    await writeFile(seenPath, older);
    const linesBefore = (await auditLines(s)).length;
    const r = await refusedUnchanged(s, ['import', o2!, '--store', s, '--trust', 'a.pub'], 4, 'AIRLOCK_BAD_SEEN');
    expect(r.stderr).toContain(`records sequence ${oldest} for docs.example.com, below ${newest}, the highest the audit log records as imported for it`);
    const after = await auditLines(s);
    expect(after).toHaveLength(linesBefore + 1);
    expect(after.at(-1)).toMatchObject({ outcome: 'refused', reason: 'AIRLOCK_BAD_SEEN' });
    expect(existsSync(join(s, 'versions', 'o2'))).toBe(false);
    // Let in by the waiver, o2 is imported, yet its order (still below o3's, which the log records) is not written.
    expect(run(['import', o2!, '--store', s, '--trust', 'a.pub', '--allow-downgrade']).stdout).toContain('imported');
    expect(await readFile(seenPath)).toEqual(older);
    // o3 again puts the newest order back.
    expect(run(['import', o3!, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    expect((JSON.parse(await readFile(seenPath, 'utf8')) as { domains: Record<string, { sequence: number }> }).domains['docs.example.com']!.sequence).toBe(
      newest,
    );
  }, 60_000);

  it('seen.json naming its domain twice (a lower order last, which JSON.parse would keep) is refused (AIRLOCK_BAD_SEEN naming the key)', async () => {
    const [o1, o2, o3] = ordered('ordered-b');
    const s = join(dir, 'seen-twice');
    const seenPath = join(s, 'trust', 'seen.json');
    expect(run(['import', o1!, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    const low = JSON.stringify((JSON.parse(await readFile(seenPath, 'utf8')) as { domains: Record<string, unknown> }).domains['docs.example.com']);
    expect(run(['import', o3!, '--store', s, '--trust', 'a.pub']).status).toBe(0);
    const high = JSON.stringify((JSON.parse(await readFile(seenPath, 'utf8')) as { domains: Record<string, unknown> }).domains['docs.example.com']);
    await writeFile(seenPath, `{"format":"airlock-seen/1","domains":{"docs.example.com":${high},"docs.example.com":${low}}}\n`);
    const r = await refusedUnchanged(s, ['import', o2!, '--store', s, '--trust', 'a.pub'], 4, 'AIRLOCK_BAD_SEEN');
    expect(r.stderr).toContain('names the key "docs.example.com" twice');
    expect(r.stderr).toContain("or remove it and import each domain's newest package");
  }, 60_000);
});

describe('schema refusals are said in plain words naming the field, once', () => {
  it('a key name with control characters (trust init) and a value of the wrong type (values file): no library wording', async () => {
    const r = run(['trust', 'init', '--store', join(dir, `Z${++n}`), '--key', 'a\x1b[2J=a.pub', '--threshold', '1']);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/keys\.a\\x1b\[2J: is not an allowed key/);
    expect(r.stderr).not.toContain('\x1b');
    expect(r.stderr).not.toMatch(/Invalid|Too (big|small)|expected .* to|received|pattern|\/\^/);
    const v = join(dir, `values-${++n}.yaml`);
    await writeFile(v, 'port: "x"\n');
    const s = airlock(['serve', '--store', join(dir, 'nostore'), '--values', v, '--port', '0'], { timeoutMs: 20_000 });
    expect(s.status, s.stderr).toBe(2);
    expect(s.stderr).toMatch(/port: must be a (whole )?number/);
    expect(s.stderr).toMatch(/\[AIRLOCK_BAD_VALUES\]\n?$/);
    expect(s.stderr).not.toMatch(/Invalid input|expected number, received/);
  });
});
