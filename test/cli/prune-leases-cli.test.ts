/**
 * `prune --keep 1` used to leave three versions and say nothing. It now prints
 * every version with what happened to it and why it was kept (newest, active, previous, served
 * by a running server with its pid); --json gives the same per version; `list` shows leases.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { airlock, startServer, stopAll } from '../helpers/bin.js';
import { buildPackage, makeTempDir, sampleSite } from '../store/helpers.js';

let dir: string;
let store: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-prune-cli-');
  store = join(dir, 'store');
  // Import order = age: served (oldest), old, prev, act, new (newest).
  for (const v of ['served', 'old', 'prev', 'act', 'new']) {
    const pkg = await buildPackage(dir, { version: v, files: sampleSite(v) });
    expect(airlock(['import', pkg, '--store', store, '--allow-unsigned', '--no-precompress']).status).toBe(0);
    await new Promise((r) => setTimeout(r, 5)); // distinct import times
  }
  expect(airlock(['activate', 'prev', '--store', store]).status).toBe(0);
  expect(airlock(['activate', 'act', '--store', store]).status).toBe(0);
});
afterEach(() => stopAll());
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `airlock serve --version V` in the background, once it prints its URL. */
async function serve(version: string): Promise<ChildProcess> {
  return (await startServer(['serve', '--store', store, '--version', version, '--port', '0'], { ready: /http:\/\//, timeoutMs: 20_000 })).child;
}

describe('prune and list say why versions stay', () => {
  it('list shows which pid serves which version; prune --keep 1 keeps newest, active, previous and the served one, saying why', async () => {
    const server = await serve('served');
    const list = airlock(['list', '--store', store]);
    expect(list.status).toBe(0);
    expect(list.stdout).toMatch(/SERVED BY/);
    expect(list.stdout).toMatch(new RegExp(`^\\s+served\\s.*pid ${server.pid}$`, 'm'));
    const json = JSON.parse(airlock(['list', '--store', store, '--json']).stdout);
    expect(json.versions.find((v: { version: string }) => v.version === 'served').servedBy).toEqual([server.pid]);
    expect(json.versions.find((v: { version: string }) => v.version === 'new').servedBy).toEqual([]);

    const r = airlock(['prune', '--keep', '1', '--store', store]);
    expect(r.status).toBe(0);
    expect(r.stdout.trim().split('\n')).toEqual([
      'kept    new: among the 1 newest (--keep 1)',
      'kept    act: active',
      'kept    prev: previous (the target of rollback)',
      'deleted old',
      `kept    served: served by a running server (pid ${server.pid})`,
      '1 deleted',
    ]);

    const again = JSON.parse(airlock(['prune', '--keep', '1', '--store', store, '--json']).stdout);
    expect(again).toMatchObject({ ok: true, keep: 1, deleted: [] });
    expect(again.versions).toEqual([
      { version: 'new', deleted: false, reasons: [{ why: 'newest', keep: 1 }] },
      { version: 'act', deleted: false, reasons: [{ why: 'active' }] },
      { version: 'prev', deleted: false, reasons: [{ why: 'previous' }] },
      { version: 'served', deleted: false, reasons: [{ why: 'leased', pids: [server.pid] }] },
    ]);

    // Once the server stops (SIGTERM: it releases its lease), nothing protects "served".
    server.kill('SIGTERM');
    await new Promise((r) => server.on('exit', r));
    expect(airlock(['list', '--store', store]).stdout).not.toContain(`pid ${server.pid}`);
    const last = airlock(['prune', '--keep', '1', '--store', store]);
    expect(last.stdout).toContain('deleted served');
    expect(last.stdout).toContain('1 deleted');
  });
});
