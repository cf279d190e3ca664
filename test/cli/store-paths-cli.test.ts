/**
 * The store path is user input. A missing store, a path that is a file, a path
 * through a file, /proc, an unwritable folder: each is a clear error naming the path (exit 2),
 * never a raw EEXIST/ENOTDIR, a hang or a silently created empty ./airlock-store; read-only
 * commands never create a store.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { access, chmod, mkdir, readFile, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlock, asNobody } from '../helpers/bin.js';
import { buildPackage, makeTempDir, sampleSite } from '../store/helpers.js';
import { setActive, writeVersion } from '../serve/helpers.js';

let dir: string;
let pkg: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-store-paths-');
  pkg = await buildPackage(dir, { version: 'v1', files: sampleSite('one') });
});
afterAll(async () => {
  await chmod(join(dir, 'locked'), 0o755).catch(() => {});
  await rm(dir, { recursive: true, force: true });
});
/** An errno code in a message (the JSON error may carry it as a field, the words never do). */
const ERRNO = /\bE(ACCES|PERM|ROFS|LOOP|NOTDIR|NAMETOOLONG|NOENT|EXIST)\b/;
const absent = async (p: string) =>
  access(p).then(
    () => false,
    () => true,
  );
const READ_ONLY: string[][] = [['list'], ['activate', 'v1'], ['rollback'], ['prune', '--keep', '1'], ['serve', '--port', '0']];
const ALL: string[][] = [...READ_ONLY, ['import', '<pkg>', '--allow-unsigned', '--no-precompress']];
const withPkg = (args: string[]) => args.map((a) => (a === '<pkg>' ? pkg : a));

describe('store paths', () => {
  it('a missing store: list/activate/rollback/prune/serve exit 2 AIRLOCK_NO_STORE naming it, and create nothing', async () => {
    const store = join(dir, 'missing', 'store');
    for (const args of READ_ONLY) {
      const r = airlock([...args, '--store', store], { timeoutMs: 15_000 });
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${store} does not exist`);
      expect(r.stderr).toContain('[AIRLOCK_NO_STORE]');
      expect(await absent(join(dir, 'missing'))).toBe(true);
    }
  });

  it('a missing store: audit verify and audit show exit 2 AIRLOCK_NO_STORE (a mistyped path never reads as a clean log of 0 lines)', async () => {
    const store = join(dir, 'missing-audit', 'store');
    for (const sub of ['verify', 'show']) {
      const r = airlock(['audit', sub, '--store', store, '--json'], { timeoutMs: 15_000 });
      expect(r.status, `${sub}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${store} does not exist`);
      expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'AIRLOCK_NO_STORE' });
    }
    expect(await absent(join(dir, 'missing-audit'))).toBe(true);
  });

  it('the default store ./airlock-store is not created by a read-only command run in an empty folder', async () => {
    const cwd = join(dir, 'cwd');
    await mkdir(cwd);
    for (const args of READ_ONLY) {
      const r = airlock(args, { cwd, timeoutMs: 15_000 });
      expect(r.status, args[0]).toBe(2);
      expect(r.stderr).toContain(`store ${join(cwd, 'airlock-store')} does not exist`);
    }
    expect(await absent(join(cwd, 'airlock-store'))).toBe(true);
  });

  it('a store path that is a file: every command exits 2 AIRLOCK_STORE_PATH saying so; the file is untouched', async () => {
    const file = join(dir, 'a-file');
    await writeFile(file, 'not a store');
    for (const args of ALL) {
      const r = airlock([...withPkg(args), '--store', file], { timeoutMs: 15_000 });
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${file} is a file, not a folder`);
      expect(r.stderr).not.toMatch(/EEXIST|ENOTDIR:/);
    }
    const through = join(file, 'store');
    for (const args of ALL) {
      const r = airlock([...withPkg(args), '--store', through], { timeoutMs: 15_000 });
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${through}`);
      expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
    }
    expect(await readFile(file, 'utf8')).toBe('not a store');
  });

  it('a store path that is a FIFO: named as one (not "a file"), exit 2, nothing opened', async () => {
    const fifo = join(dir, 'a-fifo');
    spawnSync('mkfifo', [fifo]);
    for (const args of [['list'], ['audit', 'verify'], ['activate', 'v1']]) {
      const r = airlock([...args, '--store', fifo], { timeoutMs: 15_000 });
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${fifo} is a FIFO (named pipe), not a folder`);
    }
  });

  it('the store lock a dangling symbolic link: import, activate, rollback and prune exit 2 AIRLOCK_STORE_PATH naming it at once (they waited forever, silently); the link stays', async () => {
    const store = join(dir, 'lock-dangling');
    for (const v of ['v1', 'v2']) await writeVersion(store, v, { 'index.html': `<p>${v}</p>` });
    await setActive(store, 'v2');
    await symlink('nowhere-at-all', join(store, 'lock'));
    for (const args of [['import', pkg, '--allow-unsigned'], ['activate', 'v1'], ['rollback'], ['prune', '--keep', '1']]) {
      const r = airlock([...args, '--store', store], { timeoutMs: 15_000 });
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store lock ${join(store, 'lock')} is a symbolic link to nothing`);
      expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
      expect(r.stderr).not.toMatch(ERRNO);
    }
    expect(await readlink(join(store, 'lock'))).toBe('nowhere-at-all');
    expect(await readFile(join(store, 'state.json'), 'utf8')).toContain('"v2"');
  });

  it('a store path that is a dangling symbolic link: import exits 2 AIRLOCK_STORE_PATH naming it and where it points (escaped); nothing is created', async () => {
    const link = join(dir, 'dangling');
    const target = join(dir, 'nowhere\x1b[31m');
    await symlink(target, link);
    const r = airlock(['import', pkg, '--allow-unsigned', '--no-precompress', '--store', link], { timeoutMs: 15_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/\[AIRLOCK_STORE_PATH\]\n?$/);
    expect(r.stderr).toContain(`store ${link} is a symbolic link to "${join(dir, 'nowhere')}\\x1b[31m", which does not exist`);
    expect(r.stderr).not.toContain('EEXIST');
    expect(r.stderr.includes('\x1b')).toBe(false);
    expect(await readlink(link)).toBe(target);
    expect(await absent(target)).toBe(true);
  });

  it('a store path that is a loop of symbolic links: list and import exit 2 AIRLOCK_STORE_PATH saying so in words, no errno code', async () => {
    const loop = join(dir, 'loop');
    await symlink(loop, loop);
    for (const args of [['list'], ['import', pkg, '--allow-unsigned', '--no-precompress']]) {
      const r = airlock([...args, '--store', loop], { timeoutMs: 15_000 });
      expect(r.status, `${args[0]}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${loop}: cannot look at ${loop}: its path is a loop of symbolic links`);
      expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
      expect(r.stderr).not.toMatch(ERRNO);
    }
  });

  it("a store under /proc: import exits 2 at once naming the path (Node's recursive mkdir loops forever there)", () => {
    for (const store of ['/proc/airlock-no-such-store', '/proc/self/airlock/deeper', '/proc/self']) {
      const r = airlock(['import', pkg, '--allow-unsigned', '--no-precompress', '--store', store], { timeoutMs: 15_000 });
      expect(r.signal, store).toBeNull(); // not killed by the time limit: no hang
      expect(r.status, `${store}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${store}`);
      expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
    }
    const list = airlock(['list', '--store', '/proc/airlock-no-such-store']);
    expect(list.status).toBe(2);
    expect(list.stderr).toContain('[AIRLOCK_NO_STORE]');
  });

  it('an unwritable folder: import and activate exit 2 naming the path (permission denied); nothing is created', async () => {
    const locked = join(dir, 'locked');
    await mkdir(join(locked, 'store'), { recursive: true });
    await chmod(join(locked, 'store'), 0o555);
    await chmod(locked, 0o555);
    await chmod(dir, 0o755);
    // root ignores permission bits: run the binary as an unprivileged user then.
    const asUser = asNobody();
    const run = (args: string[]) => airlock(args, { timeoutMs: 15_000, ...asUser });
    const create = run(['import', pkg, '--allow-unsigned', '--no-precompress', '--store', join(locked, 'new')]);
    expect(create.status, create.stderr).toBe(2);
    expect(create.stderr).toContain(`cannot create folder ${join(locked, 'new')}: permission denied`);
    expect(create.stderr).not.toMatch(ERRNO);
    const existing = run(['import', pkg, '--allow-unsigned', '--no-precompress', '--store', join(locked, 'store')]);
    expect(existing.status, existing.stderr).toBe(2);
    expect(existing.stderr).toMatch(/cannot write its lock .*: permission denied.*\[AIRLOCK_STORE_PATH\]/);
    expect(existing.stderr).not.toMatch(ERRNO);
    const activate = run(['activate', 'v1', '--store', join(locked, 'store')]);
    expect(activate.status).toBe(2);
    expect(await absent(join(locked, 'new'))).toBe(true);
  });

  it('a store the server may read but not write: serve exits 2 at once naming the leases folder (was a raw EACCES, exit 1)', async () => {
    const ro = join(dir, 'ro-store');
    const imported = airlock(['import', pkg, '--allow-unsigned', '--no-precompress', '--activate', '--store', ro], { timeoutMs: 30_000 });
    expect(imported.status, imported.stderr).toBe(0);
    await chmod(dir, 0o755);
    const r = airlock(['serve', '--port', '0', '--host', '127.0.0.1', '--store', ro], { timeoutMs: 15_000, ...asNobody() });
    expect(r.signal, r.stderr).toBeNull(); // exited on its own, not killed by the time limit
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`store ${ro}: cannot write this server's lease in ${join(ro, 'leases')}`);
    expect(r.stderr).toMatch(/permission denied.*\[AIRLOCK_STORE_PATH\]/);
    expect(r.stderr).not.toMatch(ERRNO);
    expect(await absent(join(ro, 'leases'))).toBe(true);
  });

  it('a store whose versions folder is a file or a FIFO: list, activate, rollback, prune and receipt exit 2 AIRLOCK_STORE_PATH in words; nothing changes', async () => {
    for (const [kind, make] of [
      ['a regular file', (p: string) => writeFile(p, 'x')],
      ['a FIFO (named pipe)', (p: string) => Promise.resolve(void spawnSync('mkfifo', [p]))],
    ] as const) {
      const store = join(dir, `versions-${kind.split(' ')[1]}`);
      await mkdir(store);
      await writeFile(join(store, 'state.json'), '{"active":"v1","previous":"v0","updatedAt":"2025-01-01T00:00:00.000Z"}');
      await make(join(store, 'versions'));
      for (const args of [
        ['list'],
        ['activate', 'v1'],
        ['rollback'],
        ['prune', '--keep', '1'],
        ['receipt', '--out', join(dir, `receipt-${kind.length}.json`)],
      ]) {
        const r = airlock([...args, '--store', store], { timeoutMs: 15_000 });
        expect(r.status, `${kind}: ${args[0]}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(`store ${store} is damaged: ${join(store, 'versions')} is ${kind}, not a folder`);
        expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
        expect(r.stderr).not.toMatch(ERRNO);
      }
      expect(await readFile(join(store, 'state.json'), 'utf8')).toContain('"active":"v1"');
      expect(await absent(join(dir, `receipt-${kind.length}.json`))).toBe(true);
    }
  });

  it("a versions folder that is a symbolic link (to another store's versions, or dangling): list, activate and import refuse it (exit 2 AIRLOCK_STORE_PATH) and commit nothing through it", async () => {
    const other = join(dir, 'other-versions');
    await mkdir(join(other, 'v7'), { recursive: true });
    for (const [name, target] of [
      ['to-other', other],
      ['dangling', join(dir, 'nowhere')],
    ] as const) {
      const store = join(dir, `versions-link-${name}`);
      await mkdir(store);
      await symlink(target, join(store, 'versions'));
      for (const args of [['list'], ['activate', 'v7'], ['import', pkg, '--allow-unsigned', '--no-precompress']]) {
        const r = airlock([...args, '--store', store], { timeoutMs: 15_000 });
        expect(r.status, `${name}: ${args[0]}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(`${join(store, 'versions')} is a symbolic link (to "${target}"), which is not followed, not a folder`);
        expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
        expect(r.stderr).not.toMatch(ERRNO);
      }
      expect(await readlink(join(store, 'versions'))).toBe(target);
    }
    expect(await absent(join(other, 'v1'))).toBe(true);
    expect(await absent(join(dir, 'nowhere'))).toBe(true);
  });

  it("switching through a link into another store: a versions folder, or one version folder, linked to another store's complete versions is refused by activate, rollback, list, serve, import and verify --store; state.json and the other store stay as they were", async () => {
    const other = join(dir, 'switch-other');
    for (const v of ['v1', 'v2']) await writeVersion(other, v, { 'index.html': `<p>${v}</p>` });
    await setActive(other, 'v2');
    const cases = [
      ['versions', (store: string) => symlink(join(other, 'versions'), join(store, 'versions')), join('versions')],
      [
        'one version',
        async (store: string) => {
          await writeVersion(store, 'v2', { 'index.html': '<p>own v2</p>' });
          await symlink(join(other, 'versions', 'v1'), join(store, 'versions', 'v1'));
        },
        join('versions', 'v1'),
      ],
    ] as const;
    for (const [name, plant, linked] of cases) {
      const store = join(dir, `switch-link-${name.replace(' ', '-')}`);
      await mkdir(store);
      await plant(store);
      await writeFile(join(store, 'state.json'), JSON.stringify({ active: 'v2', previous: 'v1', updatedAt: new Date().toISOString() }));
      const state = await readFile(join(store, 'state.json'), 'utf8');
      for (const args of [
        ['activate', 'v1'],
        ['rollback'],
        ['list'],
        ['serve', '--port', '0'],
        ['import', pkg, '--allow-unsigned', '--no-precompress'],
        ['verify', pkg, '--allow-unsigned'],
      ]) {
        const r = airlock([...args, '--store', store], { timeoutMs: 15_000 });
        expect(r.status, `${name}: ${args[0]}: ${r.stderr}`).toBe(2);
        expect(r.stderr).toContain(`${join(store, linked)} is a symbolic link (to "${join(other, linked)}"), which is not followed`);
        expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
      }
      expect(await readFile(join(store, 'state.json'), 'utf8')).toBe(state);
    }
    expect((await readdir(join(other, 'versions'))).sort()).toEqual(['v1', 'v2']);
    expect(await absent(join(other, 'versions', 'v1', 'index.html.br'))).toBe(true);
  });

  it('a folder inside a version linked elsewhere (site, variants, html, search): serve refuses it (exit 2 AIRLOCK_STORE_PATH) and writes nothing through it', async () => {
    for (const sub of ['site', 'variants', 'html', 'search']) {
      const store = join(dir, `version-sub-${sub}`);
      await writeVersion(store, 'v1', { 'index.html': '<p>v1</p>' });
      await setActive(store, 'v1');
      const elsewhere = join(dir, `elsewhere-${sub}`);
      await mkdir(elsewhere);
      await rm(join(store, 'versions', 'v1', sub), { recursive: true, force: true });
      await symlink(elsewhere, join(store, 'versions', 'v1', sub));
      const r = airlock(['serve', '--store', store, '--port', '0'], { timeoutMs: 15_000 });
      expect(r.status, `${sub}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`${join(store, 'versions', 'v1', sub)} is a symbolic link (to "${elsewhere}"), which is not followed`);
      expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
      expect(await readdir(elsewhere), sub).toEqual([]);
    }
  });

  it('STORE/leases a file, a FIFO or a loop of symbolic links: serve exits 2 AIRLOCK_STORE_PATH naming the leases folder in words, no errno', async () => {
    for (const [kind, plant, words] of [
      ['file', (p: string) => writeFile(p, 'x'), 'is a regular file, not a folder'],
      [
        'fifo',
        async (p: string) => {
          spawnSync('mkfifo', [p]);
        },
        'is a FIFO (named pipe), not a folder',
      ],
      ['loop', (p: string) => symlink(p, p), 'is a symbolic link'],
    ] as const) {
      const store = join(dir, `leases-${kind}`);
      await writeVersion(store, 'v1', { 'index.html': '<p>v1</p>' });
      await setActive(store, 'v1');
      const leases = join(store, 'leases');
      await plant(leases);
      const r = airlock(['serve', '--store', store, '--port', '0'], { timeoutMs: 15_000 });
      expect(r.signal, kind).toBeNull();
      expect(r.status, `${kind}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`store ${store} is damaged: ${leases} ${words}`);
      expect(r.stderr).toContain('the leases of running servers');
      expect(r.stderr).toMatch(/\[AIRLOCK_STORE_PATH\]\n?$/);
      expect(r.stderr).not.toMatch(ERRNO);
    }
  });

  it("a folder or a FIFO under a lease's name: prune refuses it in words (exit 2 AIRLOCK_STORE_PATH) and removes nothing", async () => {
    const store = join(dir, 'lease-kinds');
    for (const v of ['v1', 'v2', 'v3']) await writeVersion(store, v, { 'index.html': `<p>${v}</p>` });
    await setActive(store, 'v3');
    await mkdir(join(store, 'leases', '1.json'), { recursive: true });
    await writeFile(join(store, 'leases', '1.json', 'keep.txt'), "not airlock's");
    const r = airlock(['prune', '--keep', '1', '--store', store], { timeoutMs: 15_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`store ${store} is damaged: ${join(store, 'leases', '1.json')} is a folder, not a lease file`);
    expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
    expect(r.stderr).not.toMatch(ERRNO);
    expect(await readFile(join(store, 'leases', '1.json', 'keep.txt'), 'utf8')).toBe("not airlock's");
    for (const v of ['v1', 'v2', 'v3']) expect(await absent(join(store, 'versions', v))).toBe(false);
    await rm(join(store, 'leases', '1.json'), { recursive: true });
    spawnSync('mkfifo', [join(store, 'leases', '2.json')]);
    const fifo = airlock(['prune', '--keep', '1', '--store', store], { timeoutMs: 15_000 });
    expect(fifo.status, fifo.stderr).toBe(2);
    expect(fifo.stderr).toContain(`${join(store, 'leases', '2.json')} is a FIFO (named pipe), not a lease file`);
  });

  it("a lease entry no one can read (garbage, empty, a symbolic link, another pid's lease): prune refuses it in words and deletes no version and no lease", async () => {
    const store = join(dir, 'lease-unreadable');
    for (const v of ['v1', 'v2', 'v3']) await writeVersion(store, v, { 'index.html': `<p>${v}</p>` });
    await setActive(store, 'v3');
    await mkdir(join(store, 'leases'));
    const target = join(dir, 'lease-target.txt');
    await writeFile(target, "someone else's file");
    const cases: Array<[string, (p: string) => Promise<void>, string]> = [
      ['garbage', (p) => writeFile(p, '\x00\xff{{not json'), 'is not a lease airlock can read'],
      ['empty', (p) => writeFile(p, ''), 'is not a lease airlock can read'],
      ['link', (p) => symlink(target, p), 'is a symbolic link, which is not followed'],
      [
        'other pid',
        (p) => writeFile(p, JSON.stringify({ pid: 1, start: '1', version: 'v1', startedAt: new Date().toISOString() })),
        'is a lease of pid 1, not of pid 4242',
      ],
    ];
    for (const [what, plant, words] of cases) {
      const lease = join(store, 'leases', '4242.json');
      await plant(lease);
      const r = airlock(['prune', '--keep', '1', '--store', store], { timeoutMs: 15_000 });
      expect(r.status, `${what}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toContain(`${lease} ${words}`);
      expect(r.stderr).toContain('so no one can tell which version it keeps');
      expect(r.stderr).toContain('[AIRLOCK_STORE_PATH]');
      for (const v of ['v1', 'v2', 'v3']) expect(await absent(join(store, 'versions', v)), what).toBe(false);
      expect(await absent(lease), what).toBe(false);
      await rm(lease);
    }
    expect(await readFile(target, 'utf8')).toBe("someone else's file");
  });
});
