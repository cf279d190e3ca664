import { afterEach, describe, expect, it } from 'vitest';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlock as run, airlockAsync } from '../helpers/bin.js';
import { makeKey } from '../store/helpers.js';
import { makePackage } from '../helpers/make-package.js';
import { rig, type Rig } from '../fetch/emu.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

async function fetch(x: Rig, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const r = await airlockAsync(['fetch', '--domain', 'docs.example.com', '--out', x.out, ...args], {
    env: { AIRLOCK_API_URL: x.emu.url, AIRLOCK_ADMIN_KEY: x.emu.keys.admin },
    bareEnv: true,
    stdin: 'ignore',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('airlock fetch --base (CLI)', () => {
  it('writes the delta from OLD directly; verify and inspect show the base it needs; it imports onto that base', async () => {
    r = await rig();
    const key = await makeKey(r.dir);
    const keyPath = join(r.dir, 'signer.key');
    await writeFile(keyPath, key.priv.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const one = await fetch(r, ['--version-label', 'v1', '--sign-key', keyPath]);
    expect(one.code, one.stderr).toBe(0);
    const v1 = one.stdout.trim();
    const two = await fetch(r, ['--version-label', 'v2', '--sign-key', keyPath, '--base', v1, '--json']);
    expect(two.code, two.stderr).toBe(0);
    const s = JSON.parse(two.stdout) as { package: string; delta: { delta: string; full: string; base: { version: string; manifestSha256: string } } };
    expect(s.delta.base.version).toBe('v1');
    expect((await readdir(r.out)).sort()).toEqual([
      'docs.example.com-v1.airlock',
      'docs.example.com-v2.airlock',
      'docs.example.com-v2.delta.airlock',
      'docs.example.com-v2.full.airlock',
    ]);

    const v = run(['verify', s.delta.delta, '--trust', key.pubPath, '--json']);
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ ok: true, kind: 'delta', version: 'v2', base: s.delta.base, signed: true });
    const prose = run(['verify', s.delta.delta, '--trust', key.pubPath]);
    expect(prose.stdout).toContain(`base v1 manifest sha256 ${s.delta.base.manifestSha256}`);
    const i = run(['inspect', s.delta.delta]);
    expect(i.status).toBe(0);
    expect(i.stdout).toMatch(/base {7}v1 \(manifest sha256 [0-9a-f]{64}\)/);
    expect(JSON.parse(run(['inspect', s.delta.delta, '--json']).stdout)).toMatchObject({ kind: 'delta', base: s.delta.base });
    // Without the signer's key the delta is refused as any package is.
    expect(run(['verify', s.delta.delta]).status).toBe(4);

    const store = join(r.dir, 'store');
    expect(run(['import', v1, '--store', store, '--trust', key.pubPath, '--no-precompress']).status).toBe(0);
    const imp = run(['import', s.delta.delta, '--store', store, '--trust', key.pubPath, '--no-precompress', '--json']);
    expect(imp.status, imp.stderr).toBe(0);
    expect(JSON.parse(imp.stdout)).toMatchObject({ version: 'v2', status: 'imported' });
  }, 60_000);

  it('a missing or unreadable --base is refused before any export job is started', async () => {
    r = await rig();
    const bad = await fetch(r, ['--version-label', 'v2', '--base', join(r.dir, 'nope.airlock')]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('nope.airlock');
    expect(r.emu.state.jobs.size).toBe(0);
    expect(await readdir(r.out).catch(() => [])).toEqual([]);
  });

  it('a --base of another site, or of the very version asked for, is refused before any export job is started (exit 2)', async () => {
    r = await rig();
    const other = await makePackage({ outDir: join(r.dir, 'other'), version: 'v1', domain: 'other.example.com' });
    const bad = await fetch(r, ['--version-label', 'v2', '--base', other.pkgPath]);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toMatch(/--base .*is a package of other\.example\.com, not of --domain docs\.example\.com/);
    const same = await makePackage({ outDir: join(r.dir, 'same'), version: 'v2' });
    const twice = await fetch(r, ['--version-label', 'v2', '--base', same.pkgPath]);
    expect(twice.code, twice.stderr).toBe(2);
    expect(twice.stderr).toMatch(/is version v2, the --version-label asked for/);
    expect(r.emu.state.jobs.size).toBe(0);
    expect(await readdir(r.out).catch(() => [])).toEqual([]);
  });

  it('a tampered delta payload fails verify (exit 4) naming payload.gz', async () => {
    r = await rig();
    const one = await fetch(r, ['--version-label', 'v1']);
    const two = await fetch(r, ['--version-label', 'v2', '--base', one.stdout.trim(), '--json']);
    expect(two.code, two.stderr).toBe(0);
    const d = (JSON.parse(two.stdout) as { delta: { delta: string } }).delta.delta;
    const { open } = await import('node:fs/promises');
    const fh = await open(d, 'r+');
    const size = (await fh.stat()).size;
    // payload.gz is the last member: flip a byte just before the tar end blocks and padding.
    const b = Buffer.alloc(1);
    let at = size - 1024 - 1;
    for (; at > 0; at--) {
      await fh.read(b, 0, 1, at);
      if (b[0] !== 0) break;
    }
    b[0] = b[0]! ^ 1;
    await fh.write(b, 0, 1, at);
    await fh.close();
    const v = run(['verify', d, '--allow-unsigned']);
    expect(v.status).toBe(4);
    expect(v.stderr).toMatch(/payload.gz has sha256 [0-9a-f]{64} but the delta manifest says/);
  });
});
