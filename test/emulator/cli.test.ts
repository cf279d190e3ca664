import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ServiceClient, readAdminKey } from '../../src/upstream/index.js';
import { airlockAsync, startAirlock, stopAll } from '../helpers/bin.js';
import { until } from '../helpers/wait.js';

afterEach(() => stopAll());

/** Start `airlock emulate`, wait for its banner, and collect everything it prints; `stop` sends a signal and resolves with the exit code. */
async function emulate(
  extra: string[] = [],
): Promise<{ out: () => string; url: string; adminFile: string; assistantFile: string; stop(sig: NodeJS.Signals): Promise<number | null> }> {
  const p = startAirlock(['emulate', '--port', '0', ...extra]);
  const out = () => p.stdout() + p.stderr();
  await until(() => out().includes('try:'), { timeoutMs: 5000, intervalMs: 25 }).catch(() => undefined);
  const url = /listening on (http:\/\/\S+)/.exec(out())?.[1];
  const adminFile = /admin key file:\s+(\S+)/.exec(out())?.[1];
  const assistantFile = /assistant key file:\s+(\S+)/.exec(out())?.[1];
  if (!url || !adminFile || !assistantFile) throw new Error(`no banner: ${out()}`);
  return {
    out,
    url,
    adminFile,
    assistantFile,
    stop: async (sig) => {
      p.kill(sig);
      return (await p.exit()).code;
    },
  };
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
    const status =
      job.status === 'completed'
        ? job.status
        : await until(
            async () => {
              const st = (await c.getExport(job.jobId)).status;
              return st === 'completed' && st;
            },
            { timeoutMs: 5000, intervalMs: 50 },
          ).catch(() => 'not completed');
    expect(status).toBe('completed');
    const link = await c.getBundle(job.jobId);
    expect(link.sizeBytes).toBeGreaterThan(1000);
    expect(await e.stop('SIGINT')).toBe(0);
    expect(existsSync(dirname(e.adminFile))).toBe(false);
    expect(e.out()).not.toContain(adminKey!);
    expect(e.out()).not.toContain(assistantKey);
  });

  it('the seeded agent jobs: agent-job --wait prints the prLink of demo/agj_completes (exit 0) and exits 3 on demo/agj_fails', async () => {
    const e = await emulate();
    expect(e.out()).toContain('airlock agent-job demo agj_completes --wait');
    const env = { AIRLOCK_API_URL: e.url, AIRLOCK_ADMIN_KEY_FILE: e.adminFile };
    const [ok, failed] = await Promise.all([
      airlockAsync(['agent-job', 'demo', 'agj_completes', '--wait', '--timeout', '20'], { env }),
      airlockAsync(['agent-job', 'demo', 'agj_fails', '--wait', '--timeout', '20'], { env }),
    ]);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^https:\/\/github\.com\/example\/demo-docs\/pull\/1\n$/);
    expect(failed.status).toBe(3);
    expect(failed.stderr).toContain('agent job agj_fails of project demo failed upstream [AIRLOCK_JOB_FAILED]');
    // Stopped the way a user stops it, so its key folder goes too.
    expect(await e.stop('SIGINT')).toBe(0);
    expect(existsSync(dirname(e.adminFile))).toBe(false);
  });

  it('--keys-dir: the key files appear there (folder made 0700, files 0600), go on SIGINT; a missing parent is exit 2', async () => {
    const base = mkdtempSync(join(tmpdir(), 'airlock-keysdir-'));
    try {
      const dir = join(base, 'keys');
      const e = await emulate(['--keys-dir', dir]);
      expect(e.adminFile).toBe(join(dir, 'admin.key'));
      expect(statSync(dir).mode & 0o777).toBe(0o700);
      expect(statSync(e.adminFile).mode & 0o777).toBe(0o600);
      expect(readFileSync(e.adminFile, 'utf8')).toMatch(/^svc_\S+\n$/);
      expect(readdirSync(dir).sort()).toEqual(['admin.key', 'assistant.key']);
      expect(await e.stop('SIGINT')).toBe(0);
      expect(existsSync(dir)).toBe(false);
      // An existing folder stays; only the key files go.
      const kept = join(base, 'kept');
      mkdirSync(kept);
      writeFileSync(join(kept, 'mine'), 'x');
      const k = await emulate(['--keys-dir', kept]);
      expect(await k.stop('SIGTERM')).toBe(0);
      expect(readdirSync(kept)).toEqual(['mine']);
      const r = await airlockAsync(['emulate', '--port', '0', '--keys-dir', join(base, 'no', 'such')], { timeoutMs: 15_000 });
      expect(r.status).toBe(2);
      expect(r.stderr).toContain('its parent folder does not exist');
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("--keys-dir never replaces or removes the user's files, and never follows a link: an existing admin.key, a link, a loop, a dangling link, a file are exit 2 in words", async () => {
    const base = mkdtempSync(join(tmpdir(), 'airlock-keysdir-hostile-'));
    try {
      const own = join(base, 'own');
      mkdirSync(own);
      writeFileSync(join(own, 'admin.key'), 'my own key\n');
      const folderKey = join(base, 'folderkey');
      mkdirSync(join(folderKey, 'admin.key'), { recursive: true });
      symlinkSync(own, join(base, 'link'));
      symlinkSync(join(base, 'loop'), join(base, 'loop'));
      symlinkSync(join(base, 'nowhere'), join(base, 'dangling'));
      writeFileSync(join(base, 'file'), 'x');
      const cases: Array<[string, string, RegExp]> = [
        [own, 'AIRLOCK_EXISTS', /admin\.key already exists; remove it or give another --keys-dir/],
        [folderKey, 'AIRLOCK_EXISTS', /admin\.key already exists/],
        [join(base, 'link'), 'AIRLOCK_KEYS_DIR', /is a symbolic link \(to ".*own"\), which is not followed/],
        [join(base, 'loop'), 'AIRLOCK_KEYS_DIR', /is a symbolic link/],
        [join(base, 'dangling'), 'AIRLOCK_KEYS_DIR', /is a symbolic link/],
        [join(base, 'file'), 'AIRLOCK_KEYS_DIR', /is a regular file, not a folder/],
      ];
      for (const [dir, code, words] of cases) {
        const r = await airlockAsync(['emulate', '--port', '0', '--keys-dir', dir], { timeoutMs: 15_000 });
        expect(r.status, r.stderr).toBe(2);
        expect(r.stderr, dir).toMatch(words);
        expect(r.stderr, dir).toMatch(new RegExp(`\\[${code}\\]\\n$`));
        expect(r.stderr, dir).not.toMatch(/ELOOP|ENOENT|EISDIR|EEXIST/);
      }
      expect(readFileSync(join(own, 'admin.key'), 'utf8')).toBe('my own key\n');
      expect(readdirSync(own)).toEqual(['admin.key']);
      expect(statSync(join(folderKey, 'admin.key')).isDirectory()).toBe(true);
      expect(existsSync(join(base, 'nowhere'))).toBe(false);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('a bad --port is a usage error (exit 2)', async () => {
    const p = startAirlock(['emulate', '--port', '70000'], { stdio: 'ignore' });
    expect((await p.exit()).code).toBe(2);
  });
});
