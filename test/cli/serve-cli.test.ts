import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { request } from 'node:http';
import { create as tarCreate } from 'tar';
import { scanArchive } from '../../src/archive/index.js';
import { writePackage, type Manifest } from '../../src/package/index.js';
import { cleanup, get, labelledSite, setActive, tempRoot, writeVersion } from '../serve/helpers.js';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { symlink } from 'node:fs/promises';
import { airlockAsync, startAirlock, startServer, type Server } from '../helpers/bin.js';
import { until } from '../helpers/wait.js';

const BIG = 8 * 1024 * 1024;
let root: string;
let store: string;

beforeAll(async () => {
  root = await tempRoot('airlock-serve-cli-');
  store = join(root, 'store');
  await writeVersion(store, 'v1', { ...labelledSite('v1'), 'big.bin': Buffer.alloc(BIG, 1) });
  await setActive(store, 'v1');
});
afterAll(async () => cleanup(root));

/** Start the binary and wait (bounded) for the URL it prints on stdout. */
const start = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<Server> => startServer(args, { env, timeoutMs: 15_000 });

describe('airlock serve (binary)', () => {
  it('serves the active version and exits 0 on SIGTERM after finishing an in-flight download', async () => {
    const s = await start(['serve', '--store', store, '--port', '0']);
    expect((await get(s.url + '/guide/intro')).body.toString()).toContain('version=v1');
    // Begin a large streamed download, read nothing yet, then ask the server to stop.
    const received = new Promise<number>((resolve, reject) => {
      request(s.url + '/big.bin', { agent: false }, (res) => {
        let n = 0;
        res.pause();
        setTimeout(() => {
          s.child.kill('SIGTERM');
          setTimeout(() => res.resume(), 300);
        }, 200);
        res.on('data', (c: Buffer) => (n += c.length));
        res.on('end', () => resolve(n));
        res.on('error', reject);
      })
        .on('error', reject)
        .end();
    });
    expect(await received).toBe(BIG);
    expect((await s.exit()).code).toBe(0);
  });

  it('--workers 2: both workers answer on one port and all exit 0 on SIGTERM', async () => {
    const s = await start(['serve', '--store', store, '--port', '0', '--workers', '2', '--access-log', '-']);
    for (let i = 0; i < 6; i++) expect((await get(s.url + '/_airlock/health')).status).toBe(200);
    await until(() => (s.stderr().match(/worker \d+/g) ?? []).length >= 2, { timeoutMs: 5000, intervalMs: 50, what: 'two workers in the log' });
    const pids = [...s.stderr().matchAll(/\(worker (\d+)\)/g)].map((m) => Number(m[1]));
    expect(new Set(pids).size).toBe(2);
    expect(s.stderr()).toContain('"path":"/_airlock/health"');
    s.child.kill('SIGTERM');
    expect((await s.exit()).code).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
  });

  it('--access-log that is a FIFO without a reader, a folder, a symlink loop or a dangling link: refused at start (exit 2, AIRLOCK_ACCESS_LOG, in words), promptly; nothing created through the link', async () => {
    const d = join(root, 'access-logs');
    await mkdir(join(d, 'folder'), { recursive: true });
    execFileSync('mkfifo', [join(d, 'fifo')]);
    await symlink('loop', join(d, 'loop'));
    await symlink(join(d, 'nowhere'), join(d, 'dangling'));
    for (const [name, words] of [
      ['fifo', /is a FIFO \(named pipe\), not a regular file/],
      ['folder', /is a folder, not a regular file/],
      ['loop', /is a symbolic link \(to "loop"\), not a regular file: it is not followed/],
      ['dangling', /is a symbolic link \(to ".*nowhere"\), not a regular file: it is not followed/],
    ] as const) {
      const r = await airlockAsync(['serve', '--store', store, '--port', '0', '--access-log', join(d, name)], { timeoutMs: 10_000 });
      expect(r.signal, name).toBeNull();
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr, name).toMatch(words);
      expect(r.stderr, name).toMatch(/\[AIRLOCK_ACCESS_LOG\]\n$/);
      expect(r.stderr, name).not.toMatch(/EISDIR|ELOOP|ENXIO|Unhandled|node:/);
    }
    expect(existsSync(join(d, 'nowhere'))).toBe(false);
  });

  it('--enable of a feature unavailable in air-gapped is a usage error (exit 2) citing the matrix', async () => {
    const child = startAirlock(['serve', '--store', store, '--enable', 'search']);
    expect((await child.exit()).code).toBe(2);
    expect(child.stderr()).toMatch(/search/);
  });
});

describe('airlock preview (binary)', () => {
  async function makeArchive(): Promise<string> {
    const src = join(root, 'export', 'site');
    await mkdir(join(src, 'guide'), { recursive: true });
    for (const [p, d] of Object.entries(labelledSite('p1'))) await writeFile(join(src, p), d);
    const file = join(root, 'bundle.tar.gz');
    await tarCreate({ gzip: true, file, cwd: join(root, 'export'), portable: true }, ['site']);
    return file;
  }

  it.each(['SIGTERM', 'SIGINT'] as const)('serves an export archive and removes its temp folder on %s', async (sig) => {
    const archive = await makeArchive();
    const tmp = join(root, `tmp-${sig}`);
    await mkdir(tmp);
    const s = await start(['preview', archive, '--port', '0'], { TMPDIR: tmp });
    const r = await get(s.url + '/guide/intro');
    expect([r.status, r.body.toString().includes('version=p1')]).toEqual([200, true]);
    expect((await readdir(tmp)).length).toBe(1);
    s.child.kill(sig);
    expect((await s.exit()).code).toBe(0);
    expect(await readdir(tmp)).toEqual([]);
  });

  it('serves a .airlock package under its version label', async () => {
    const archive = await makeArchive();
    const scan = await scanArchive({ path: archive });
    const manifest: Manifest = {
      format: 'airlock-package/1',
      domain: 'docs.example.com',
      version: 'pkg-1',
      jobId: null,
      createdAt: new Date().toISOString(),
      pageCount: 3,
      archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: scan.archiveSize, sha256: scan.archiveSha256 },
      files: scan.files,
    };
    const pkg = join(root, 'site.airlock');
    await writePackage({ outPath: pkg, manifest, archivePath: archive });
    const s = await start(['preview', pkg, '--port', '0']);
    const r = await get(s.url + '/');
    expect([r.status, r.headers['x-airlock-version']]).toEqual([200, 'pkg-1']);
    s.child.kill('SIGTERM');
    expect((await s.exit()).code).toBe(0);
  });
});
