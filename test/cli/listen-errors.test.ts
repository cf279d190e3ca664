import { describe, it, expect, beforeAll, afterAll, afterEach } from 'vitest';
import { chmod, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makePackage } from '../helpers/make-package.js';
import { airlockAsync, asNobody } from '../helpers/bin.js';
import { occupiedPort, privateTmp } from '../helpers/proc.js';
import { cleanup, labelledSite, setActive, tempRoot, writeVersion } from '../serve/helpers.js';
import { listenError } from '../../src/util/listen.js';

/**
 * Listen errors: serve / preview / demo / emulate after a listen error used to print the error and
 * hang (ignoring the first SIGTERM), leaving a lease and, for demo, a temp folder with a private
 * key. Now: exit 1 at once, the address named as host:port, nothing left behind.
 */
let root: string;
let store: string;
let pkg: string;
let blocker: Awaited<ReturnType<typeof occupiedPort>>;
let port: number;

beforeAll(async () => {
  root = await tempRoot('airlock-listen-');
  store = join(root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  await setActive(store, 'v1');
  pkg = (await makePackage({ outDir: join(root, 'pkg'), version: 'v1' })).pkgPath;
  blocker = await occupiedPort();
  port = blocker.port;
});
afterAll(async () => {
  await blocker.release();
  await cleanup(root);
});

const leases = async () => await readdir(join(store, 'leases')).catch(() => [] as string[]);
let tmp: Awaited<ReturnType<typeof privateTmp>>;
afterEach(async () => tmp?.remove());

async function run(args: string[], o: { uid?: number } = {}) {
  tmp = await privateTmp();
  const r = await airlockAsync(args, { env: { TMPDIR: tmp.dir }, cwd: root, timeoutMs: 30_000, ...o });
  return { ...r, litter: await tmp.litter() };
}

const COMMANDS: Array<[string, () => string[]]> = [
  ['serve', () => ['serve', '--store', store]],
  ['serve --workers 2', () => ['serve', '--store', store, '--workers', '2']],
  ['preview', () => ['preview', pkg]],
  ['demo', () => ['demo']],
  ['emulate', () => ['emulate']],
];

describe('a port already in use (EADDRINUSE)', () => {
  for (const [name, args] of COMMANDS) {
    it(`${name}: exits 1 at once naming 127.0.0.1:PORT, no lease and no temp folder left`, async () => {
      const r = await run([...args(), '--port', String(port)]);
      expect(r.signal).toBeNull(); // not killed by the time limit: it ended by itself
      expect(r.status).toBe(1);
      expect(r.stderr).toContain(`cannot listen on 127.0.0.1:${port}: the port is already in use`);
      expect(r.stderr).toContain('[AIRLOCK_LISTEN]');
      expect(r.stdout).toBe('');
      expect(r.litter).toEqual([]);
      expect(await leases()).toEqual([]);
    });
  }
});

describe('a host that is not there', () => {
  for (const [name, args] of COMMANDS) {
    it(`${name} --host nosuch.invalid: exits 1 naming the host, nothing left behind`, async () => {
      const r = await run([...args(), '--port', '0', '--host', 'nosuch.invalid']);
      expect(r.signal).toBeNull();
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/cannot listen on nosuch\.invalid:0: (unknown host name|the host name could not be resolved)/);
      expect(r.stderr).not.toMatch(/\bE[A-Z_]{3,}\b/); // words only; the errno is a field of the JSON error
      expect(r.litter).toEqual([]);
      expect(await leases()).toEqual([]);
    });
  }

  it('serve --host 192.0.2.1 (TEST-NET, not an address of this machine): exits 1 with EADDRNOTAVAIL', async () => {
    const r = await run(['serve', '--store', store, '--port', '0', '--host', '192.0.2.1']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("cannot listen on 192.0.2.1:0: the address is not one of this machine's");
    expect(await leases()).toEqual([]);
  });
});

describe('a host name with a control character', () => {
  it('serve --host "0.0.0.0.evil\\x1b[31m": exits 1 naming the host escaped, in words, no errno', async () => {
    const r = await run(['serve', '--store', store, '--port', '0', '--host', '0.0.0.0.evil\x1b[31m']);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/cannot listen on 0\.0\.0\.0\.evil\\x1b\[31m:0: (unknown host name|the host name could not be resolved)/);
    expect(r.stderr).not.toMatch(/\bE[A-Z_]{3,}\b/);
    expect(r.stderr.includes('\x1b')).toBe(false);
    expect(await leases()).toEqual([]);
  });
});

describe('a privileged port (EACCES)', () => {
  it('names the problem and the port, and suggests one of 1024 or more', async () => {
    expect(String(listenError(Object.assign(new Error('x'), { code: 'EACCES' }), '::1', 80))).toContain('[::1]:80: permission denied');
    // Through the binary as an unprivileged user (nobody, when the tests run as root), where this
    // machine has privileged ports at all (containers may set ip_unprivileged_port_start to 0).
    const start = Number(await readFile('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8').catch(() => '1024'));
    if (start <= 1) return;
    const user = asNobody();
    const dropped = user.uid !== undefined;
    if (dropped) await chmod(root, 0o755);
    for (const args of [['serve', '--store', store], ['preview', pkg], ['demo'], ['emulate']]) {
      tmp = await privateTmp();
      if (dropped) await chmod(tmp.dir, 0o1777);
      const r = await airlockAsync([...args, '--port', '1'], { env: { TMPDIR: tmp.dir }, cwd: '/', timeoutMs: 30_000, ...user });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toContain('cannot listen on 127.0.0.1:1: permission denied (ports below 1024 need privileges)');
      expect(await tmp.litter()).toEqual([]);
      await tmp.remove();
    }
  });
});
