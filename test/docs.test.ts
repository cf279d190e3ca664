/**
 * The README's command blocks run as written: every `sh` block after the install section, in
 * order, in one bash session started at the clone's root (as a reader pastes them), with
 * `airlock` on PATH (what `npm link` does) and the blocks' fixed ports swapped for free ones.
 */
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from './helpers/bin.js';

const ROOT = join(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');
const blocks = [...README.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);

const dir = mkdtempSync(join(tmpdir(), 'airlock-readme-'));
let sessionGroup: number | null = null;
afterAll(() => {
  // A session cut short by the test's own time limit must not outlive the test (it waits in
  // `until` loops for servers): its whole process group goes.
  if (sessionGroup !== null) try { process.kill(-sessionGroup, 'SIGKILL'); } catch { /* already gone */ }
  rmSync(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

describe('README', () => {
  it('opens with the two commands a new user runs: npm ci && npm run demo, npm ci && npm test', () => {
    const first = blocks[0]!.split('\n').map((l) => l.replace(/\s+#.*$/, ''));
    expect(first.slice(0, 2)).toEqual(['npm ci && npm run demo', 'npm ci && npm test']);
    expect(README.indexOf('```sh')).toBeLessThan(README.indexOf('\n## '));
  });

  it('every command block after the install section runs as written, in one shell, and stops its servers', async () => {
    const install = blocks.findIndex((b) => b.includes('npm link'));
    expect(install).toBeGreaterThan(0);
    let script = blocks.slice(install + 1).join('\n');
    // The README's fixed ports, each swapped for a free one (tests run side by side).
    const ports = new Map<string, string>();
    for (const p of new Set(script.match(/\b80[89]\d\b/g) ?? [])) ports.set(p, String(await freePort()));
    script = script.replace(/\b80[89]\d\b/g, (p) => ports.get(p)!);
    writeFileSync(join(dir, 'airlock'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
    chmodSync(join(dir, 'airlock'), 0o755);
    writeFileSync(join(dir, 'session.sh'), `set -eu\n${script}\necho README-SESSION-DONE\n`);
    const env = { ...process.env, PATH: `${dir}:${process.env.PATH}`, TMPDIR: dir, AIRLOCK_STORE: undefined, AIRLOCK_API_URL: undefined, AIRLOCK_ADMIN_KEY: undefined, AIRLOCK_ADMIN_KEY_FILE: undefined };
    const child = spawn('bash', [join(dir, 'session.sh')], { cwd: ROOT, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    sessionGroup = child.pid!;
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), 270_000);
    const status = await new Promise<number | null>((r) => child.on('close', r));
    clearTimeout(timer);
    // Whatever the session left running (it should leave nothing) goes with its process group.
    let leftover = true;
    try { process.kill(-child.pid!, 'SIGKILL'); } catch { leftover = false; }
    expect(status, `${stdout}\n${stderr}`).toBe(0);
    expect(stdout).toContain('README-SESSION-DONE');
    expect(leftover, 'a server of the session was still running').toBe(false);
    expect(stderr).not.toMatch(/AIRLOCK_INTERNAL|Error:|at .*\.js:\d+/);
    // What the walkthrough says happens did happen.
    expect(stdout).toMatch(/HTTP\/1\.1 200 OK/i);
    const [scratch] = readdirSync(dir).filter((n) => n.startsWith('tmp.'));
    expect(scratch, readdirSync(dir).join(' ')).toBeDefined();
    const s = join(dir, scratch!);
    expect(existsSync(join(s, 'carry', 'docs.example.com-v1.airlock'))).toBe(true);
    expect(existsSync(join(s, 'carry', 'docs.example.com-v2.airlock'))).toBe(true);
    // The isolated-side block ends with a rollback to v2: the mirror hands out the active version.
    expect(readdirSync(join(s, 'downstream'))).toEqual(['docs.example.com-v2.airlock']);
    expect(existsSync(join(s, 'keys')), 'emulate removes its key folder when stopped').toBe(false);
    expect(JSON.parse(readFileSync(join(s, 'store', 'state.json'), 'utf8')).active).toBe('v2');
  }, 300_000);
});
