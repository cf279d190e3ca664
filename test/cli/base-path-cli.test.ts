import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { airlockAsync } from '../helpers/bin.js';
import { startAirlock, type Proc } from '../helpers/proc.js';
import { cleanup, get, setActive, tempRoot, writeVersion } from '../serve/helpers.js';

/** `serve --base-path` and the values key `basePath`: the sub-path given instead of detected. */
let root: string;
let plain: string;
let canonical: string;

beforeAll(async () => {
  root = await tempRoot('airlock-base-path-');
  // Nothing in this site says it was built for a sub-path: only --base-path can add one.
  plain = join(root, 'plain');
  await writeVersion(plain, 'v1', { 'index.html': '<!doctype html><a href="guide/">guide</a>', 'guide/index.html': '<!doctype html><p>guide</p>' });
  await setActive(plain, 'v1');
  // This one names /project/ as its home: detected (test/serve/own-address.test.ts), unless --base-path / turns detection off.
  canonical = join(root, 'canonical');
  await writeVersion(canonical, 'v1', {
    'index.html': '<!doctype html><link rel="canonical" href="https://org.example.io/project/"><a href="guide/">guide</a>',
    'guide/index.html': '<!doctype html><p>guide</p>',
  });
  await setActive(canonical, 'v1');
});
afterAll(async () => {
  await cleanup(root);
});

async function serving(args: string[], check: (base: string) => Promise<void>): Promise<void> {
  const p: Proc = startAirlock(['serve', '--port', '0', ...args]);
  try {
    const base = `http://127.0.0.1:${(await p.waitFor(/^http:\/\/127\.0\.0\.1:(\d+)\//m))[1]}`;
    await check(base);
  } finally {
    p.kill('SIGTERM');
    expect((await p.exit(10_000)).code).toBe(0);
  }
}

describe('serve --base-path', () => {
  it('--base-path /project/ serves the site there and at the root', async () => {
    await serving(['--store', plain, '--base-path', '/project/'], async (base) => {
      expect((await get(base + '/project/guide/')).status).toBe(200);
      expect((await get(base + '/guide/')).status).toBe(200);
      expect((await get(base + '/other/guide/')).status).toBe(404);
    });
  });

  it('the values key basePath does the same; --base-path / turns detection off', async () => {
    const values = join(root, 'values.yaml');
    await writeFile(values, `store: ${plain}\nbasePath: /docs/v2/\n`);
    await serving(['--values', values], async (base) => {
      expect((await get(base + '/docs/v2/guide/')).status).toBe(200);
    });
    await serving(['--store', canonical, '--base-path', '/'], async (base) => {
      expect((await get(base + '/project/guide/')).status).toBe(404);
      expect((await get(base + '/guide/')).status).toBe(200);
    });
  });

  it('a path that is not a site path is exit 2 AIRLOCK_BAD_BASE_PATH, naming the flag or the key', async () => {
    const values = join(root, 'bad.yaml');
    await writeFile(values, `store: ${plain}\nbasePath: "/a//b"\n`);
    const runs = await Promise.all([
      airlockAsync(['serve', '--store', plain, '--port', '0', '--base-path', '../etc']),
      airlockAsync(['serve', '--store', plain, '--port', '0', '--base-path', '/_airlock/\x1b[31m']),
      airlockAsync(['serve', '--values', values, '--port', '0']),
      airlockAsync(['serve', '--store', plain, '--port', '0', '--base-path', '/' + 'a'.repeat(10_000)]),
    ]);
    for (const r of runs) {
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain('[AIRLOCK_BAD_BASE_PATH]');
      expect(r.stderr).toMatch(/is not a site path: give one like \/project\//);
      expect(r.stderr).not.toContain('\x1b');
    }
    expect(runs[0]!.stderr).toContain('--base-path "../etc"');
    expect(runs[1]!.stderr).toContain('\\u001b[31m');
    expect(runs[2]!.stderr).toContain('basePath "/a//b"');
    // A long value is shown cut, with its length, not echoed whole.
    expect(runs[3]!.stderr).toContain('… (10001 characters)');
    expect(runs[3]!.stderr.length).toBeLessThan(1000);
  });
});
