import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { access, chmod, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlockAsync } from '../helpers/bin.js';
import { buildPackage, makeTempDir, sampleSite } from '../store/helpers.js';

/**
 * A hostile program first on PATH (a `sync` that records that it ran, then hangs) is never run by
 * an import: airlock runs only the system's own `sync` (durable extraction flushes the file
 * system once), so the import ends by itself, unchanged in time, and the marker never appears.
 */
let dir: string;
let pkg: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-path-programs-');
  pkg = await buildPackage(dir, { version: 'v1', files: sampleSite('one') });
  const bin = join(dir, 'hostile-bin');
  await mkdir(bin);
  await writeFile(join(bin, 'sync'), `#!/bin/sh\necho ran > ${JSON.stringify(join(dir, 'hostile-sync-ran'))}\nsleep 60\n`);
  await chmod(join(bin, 'sync'), 0o755);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('programs found on PATH', () => {
  it('import never runs a sync placed first on PATH; it ends by itself and the version is committed', async () => {
    const store = join(dir, 'store');
    const r = await airlockAsync(['import', pkg, '--store', store, '--allow-unsigned', '--activate'], {
      env: { PATH: `${join(dir, 'hostile-bin')}:${process.env.PATH ?? ''}` },
      timeoutMs: 30_000,
    });
    expect([r.status, r.signal], r.stderr).toEqual([0, null]);
    expect(
      await access(join(dir, 'hostile-sync-ran')).then(
        () => true,
        () => false,
      ),
    ).toBe(false);
    expect(
      await access(join(store, 'versions', 'v1', 'version.json')).then(
        () => true,
        () => false,
      ),
    ).toBe(true);
  });
});
