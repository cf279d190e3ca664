import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient, readAdminKey } from '../../src/upstream/index.js';
import { sleep } from './site.js';

const BIN = join(import.meta.dirname, '../../dist/src/cli/bin.js');
let child: ChildProcess | undefined;
afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
});

/** Start `airlock emulate`, wait for its banner, and collect everything it prints. */
async function emulate(): Promise<{ out: () => string; url: string; adminFile: string; assistantFile: string }> {
  const p = spawn(process.execPath, [BIN, 'emulate', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  child = p;
  let out = '';
  p.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  p.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  for (let i = 0; i < 200 && !out.includes('try:'); i++) await sleep(25);
  const url = /listening on (http:\/\/\S+)/.exec(out)?.[1];
  const adminFile = /admin key file:\s+(\S+)/.exec(out)?.[1];
  const assistantFile = /assistant key file:\s+(\S+)/.exec(out)?.[1];
  if (!url || !adminFile || !assistantFile) throw new Error(`no banner: ${out}`);
  return { out: () => out, url, adminFile, assistantFile };
}

describe('airlock emulate', () => {
  it('prints the URL and key files (0600, never the keys), serves the committed fixture site, and stops on SIGINT', async () => {
    const e = await emulate();
    expect(statSync(e.adminFile).mode & 0o077).toBe(0);
    const adminKey = await readAdminKey({ AIRLOCK_ADMIN_KEY_FILE: e.adminFile });
    const assistantKey = readFileSync(e.assistantFile, 'utf8').trim();
    expect(adminKey).toMatch(/^svc_/);
    expect(assistantKey).toMatch(/^svc_dsc_/);
    const c = new ServiceClient({ baseUrl: e.url, adminKey, assistantKey });
    const job = await c.startExport('docs.example.com');
    let status = job.status;
    for (let i = 0; i < 100 && status !== 'completed'; i++) {
      await sleep(50);
      status = (await c.getExport(job.jobId)).status;
    }
    expect(status).toBe('completed');
    const link = await c.getBundle(job.jobId);
    expect(link.sizeBytes).toBeGreaterThan(1000);
    const exited = new Promise<number | null>((r) => child!.once('exit', (code) => r(code)));
    child!.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(existsSync(dirname(e.adminFile))).toBe(false);
    expect(e.out()).not.toContain(adminKey!);
    expect(e.out()).not.toContain(assistantKey);
  });

  it('a bad --port is a usage error (exit 2)', async () => {
    const p = spawn(process.execPath, [BIN, 'emulate', '--port', '70000'], { stdio: 'ignore' });
    child = p;
    expect(await new Promise((r) => p.once('exit', r))).toBe(2);
  });
});
