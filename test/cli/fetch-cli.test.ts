import { afterEach, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { tgz, siteFiles } from '../helpers/evil-archives.js';
import { rig, tree, type Rig } from '../fetch/emu.js';
import { airlockAsync } from '../helpers/bin.js';

let r: Rig | undefined;
afterEach(async () => {
  await r?.close();
  r = undefined;
});

interface Run {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Run the CLI (async, so the in-process emulator keeps serving) with only PATH and `env`; `during` may poke the child. */
async function airlock(args: string[], env: Record<string, string | undefined>, during?: (child: ChildProcess) => void): Promise<Run> {
  const r = await airlockAsync(args, { env, bareEnv: true, stdin: 'ignore', during });
  return { code: r.status, signal: r.signal, stdout: r.stdout, stderr: r.stderr };
}

const envFor = (x: Rig, key: string | undefined = x.emu.keys.admin) => ({ AIRLOCK_API_URL: x.emu.url, AIRLOCK_ADMIN_KEY: key });
const noSecret = (x: Rig, run: Run) => {
  const all = run.stdout + run.stderr;
  expect(all).not.toContain(x.emu.keys.admin);
  expect(all).not.toMatch(/svc_[A-Za-z0-9]{6,}/);
};

describe('airlock fetch (CLI)', () => {
  it('writes the package, prints its path, logs plain progress lines on a non-TTY, never a key', async () => {
    r = await rig();
    const run = await airlock(['fetch', '--domain', 'docs.example.com', '--out', r.out, '--version-label', 'v1'], envFor(r));
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(join(r.out, 'docs.example.com-v1.airlock'));
    expect(run.stderr).toMatch(/export job \S+ started/);
    expect(run.stderr).toMatch(/export (running|completed) \d+%/);
    expect(run.stderr).not.toContain('\u001b['); // no bar escape codes in a log
    noSecret(r, run);
    expect(r.emu.state.objectRequests.every((q) => q.headers.authorization === undefined)).toBe(true);
  });

  it('--json prints one summary document', async () => {
    r = await rig();
    const run = await airlock(['fetch', '--domain', 'zip.example.com', '--out', r.out, '--json'], envFor(r));
    expect(run.code).toBe(0);
    const summary = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(summary).toMatchObject({ ok: true, domain: 'zip.example.com', archive: { name: 'bundle.zip', format: 'zip' }, signed: false });
    expect(existsSync(summary.package as string)).toBe(true);
  });

  it('wrong key type (an assistant key) → exit 5 before any request is sent', async () => {
    r = await rig();
    const run = await airlock(['fetch', '--domain', 'docs.example.com', '--out', r.out], envFor(r, r.emu.keys.assistant));
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('wrong key type');
    expect(r.emu.state.apiRequests).toEqual([]);
    noSecret(r, run);
  });

  it('missing key → exit 5; missing --domain or API URL → exit 2', async () => {
    r = await rig();
    const out = ['--out', r.out];
    expect((await airlock(['fetch', '--domain', 'docs.example.com', ...out], { AIRLOCK_API_URL: r.emu.url })).code).toBe(5);
    expect((await airlock(['fetch', ...out], envFor(r))).code).toBe(2);
    expect((await airlock(['fetch', '--domain', 'docs.example.com', ...out], { AIRLOCK_ADMIN_KEY: r.emu.keys.admin })).code).toBe(2);
    expect(r.emu.state.apiRequests).toEqual([]);
  });

  it('401 from the API → exit 5 and the key is not echoed', async () => {
    r = await rig();
    const run = await airlock(['fetch', '--domain', 'docs.example.com', '--out', r.out], envFor(r, 'svc_wrongwrongwrong123'));
    expect(run.code).toBe(5);
    expect(run.stdout + run.stderr).not.toContain('svc_wrongwrongwrong123');
  });

  it('job failed upstream → exit 3 with the service error text', async () => {
    r = await rig({ faults: { failingDomains: ['docs.example.com'] } });
    const run = await airlock(['fetch', '--domain', 'docs.example.com', '--out', r.out], envFor(r));
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('exited with code 1');
  });

  it('zip-slip style evil archive → exit 4, nothing in the output folder', async () => {
    r = await rig();
    const src = join(r.dir, 'evil.tar.gz');
    await writeFile(src, tgz([...siteFiles(), { name: '../../evil.txt', data: 'pwned' }]));
    r.emu.setFaults({ serveArchive: [{ domain: 'docs.example.com', path: src }] });
    const run = await airlock(['fetch', '--domain', 'docs.example.com', '--out', r.out], envFor(r));
    expect(run.stderr).toContain('evil.txt');
    expect(run.code).toBe(4);
    expect(await tree(r.out)).toEqual([]);
  });

  it('SIGINT during the download keeps the part, writes no package; the re-run resumes', async () => {
    r = await rig({ faults: { throttleBytesPerSec: 4000 } });
    const rr = r;
    const part = join(r.out, '.docs.example.com.bundle.part');
    const run = await airlock(['fetch', '--domain', 'docs.example.com', '--out', r.out], envFor(r), (child) => {
      const t = setInterval(() => {
        if (existsSync(part) && statSync(part).size > 0) {
          clearInterval(t);
          child.kill('SIGINT');
        }
      }, 20);
      child.on('close', () => clearInterval(t));
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('interrupted');
    const kept = statSync(part).size;
    expect(kept).toBeGreaterThan(0);
    expect((await tree(r.out)).filter((f) => f.endsWith('.airlock'))).toEqual([]);
    rr.emu.setFaults({ throttleBytesPerSec: null });
    const again = await airlock(['fetch', '--domain', 'docs.example.com', '--out', r.out, '--json'], envFor(r));
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ resumedBytes: kept });
    expect(existsSync(part)).toBe(false);
  });
});
