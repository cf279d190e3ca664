import { describe, it, expect, beforeEach, afterEach } from 'vitest';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { airlock, airlockAsync, asNobody } from '../helpers/bin.js';

/** `keygen --out` into a missing folder exited 1 with a raw ENOENT. */
let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-keygen-'));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

describe('airlock keygen --out', () => {
  it('into a missing folder: exit 2 naming the folder, nothing created (no folder, no key)', async () => {
    const r = airlock(['keygen', '--out', 'missing/sub/signer'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`folder ${join(dir, 'missing/sub')} does not exist; create it first`);
    expect(r.stderr).not.toContain('ENOENT');
    expect(await readdir(dir)).toEqual([]);
  });

  it('naming a folder (with or without a trailing slash): exit 2, no FOLDER.key written beside it', async () => {
    await mkdir(join(dir, 'keys'));
    for (const out of ['keys', 'keys/']) {
      const r = airlock(['keygen', '--out', out], { cwd: dir });
      expect(r.status, out).toBe(2);
      expect(r.stderr).toContain('give a file prefix (e.g. --out keys/signer writes keys/signer.key and .pub)');
    }
    expect((await readdir(dir)).sort()).toEqual(['keys']);
    expect(await readdir(join(dir, 'keys'))).toEqual([]);
  });

  it('never overwrites an existing key: exit 2, both files byte-identical; a lone .pub blocks the pair too', async () => {
    expect(airlock(['keygen', '--out', 'signer'], { cwd: dir }).status).toBe(0);
    const before = [await readFile(join(dir, 'signer.key')), await readFile(join(dir, 'signer.pub'))];
    const r = airlock(['keygen', '--out', 'signer'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('already exists; refusing to overwrite a key');
    expect(await readFile(join(dir, 'signer.key'))).toEqual(before[0]);
    expect(await readFile(join(dir, 'signer.pub'))).toEqual(before[1]);
    expect((await stat(join(dir, 'signer.key'))).mode & 0o777).toBe(0o600);

    await writeFile(join(dir, 'other.pub'), 'mine');
    expect(airlock(['keygen', '--out', 'other'], { cwd: dir }).status).toBe(2);
    expect(await readFile(join(dir, 'other.pub'), 'utf8')).toBe('mine');
    expect((await readdir(dir)).sort()).toEqual(['other.pub', 'signer.key', 'signer.pub']);
  });

  it('a parent that is a file: exit 2 naming it', async () => {
    await writeFile(join(dir, 'plain'), 'x');
    const r = airlock(['keygen', '--out', 'plain/signer'], { cwd: dir });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`${join(dir, 'plain')} is not a folder`);
  });

  it('a folder it may not write: exit 1 with AIRLOCK_KEY_WRITE naming the pair, no raw error', async () => {
    const ro = join(dir, 'ro');
    await mkdir(ro);
    await chmod(ro, 0o555);
    await chmod(dir, 0o755);
    // As nobody when the tests run as root (root writes anywhere).
    const r = await airlockAsync(['keygen', '--out', join(ro, 'signer')], { cwd: '/', ...asNobody() });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`cannot write the key pair ${join(ro, 'signer')}.key/.pub: permission denied [AIRLOCK_KEY_WRITE]`);
    expect(await readdir(ro)).toEqual([]);
  });
});
