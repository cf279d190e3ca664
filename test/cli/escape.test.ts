import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildPackage, sampleSite } from '../store/helpers.js';
import { airlock } from '../helpers/bin.js';
import { cleanup, labelledSite, setActive, tempRoot, writeVersion } from '../serve/helpers.js';

/**
 * Terminal escape injection: control characters in a manifest's strings (or any
 * value a command prints) reached the operator's terminal through inspect, verify, list, import
 * and errors. Every command now prints them escaped (\x1b, \r, \u202e...), in prose, logs and
 * errors; JSON keeps the value but escapes C1 and bidi controls too. Checked on bytes, through
 * the binary. (The package module also refuses such domains at the edge; this must hold without
 * that: a test that gets exit 4 here still checks that the refusal is printed safely.)
 */
const EVIL = 'docs.example.com\x1b]0;owned\x07\x1b[2J\r\u202e\u009b31m\nOK forged line';
/** Raw bytes a terminal would act on: C0 but newline, DEL, C1, bidi overrides. */
// eslint-disable-next-line no-control-regex -- matching control characters is the point (terminal escape injection)
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

let root: string;
let pkg: string;
let store: string;

beforeAll(async () => {
  root = await tempRoot('airlock-escape-');
  // Built with the test's own tar writer: src/package's writer refuses such a manifest.
  await mkdir(join(root, 'pkg'));
  pkg = await buildPackage(join(root, 'pkg'), {
    version: 'v1',
    files: sampleSite('v1'),
    name: 'evil.airlock',
    tamper: (m) => Object.assign(m, { domain: EVIL, jobId: 'job\x1b[31mred' }),
  });
  // A store written by hand, so `list` is checked whatever import would say of such a domain.
  store = join(root, 'store');
  await writeVersion(store, 'v1', labelledSite('v1'));
  const meta = join(store, 'versions', 'v1', 'version.json');
  await writeFile(meta, JSON.stringify({ ...JSON.parse(await readFile(meta, 'utf8')), domain: EVIL }));
  await setActive(store, 'v1');
});
afterAll(async () => cleanup(root));

function expectSafe(what: string, r: { stdout: string; stderr: string }): void {
  expect(r.stdout, `${what} stdout`).not.toMatch(RAW_CONTROL);
  expect(r.stderr, `${what} stderr`).not.toMatch(RAW_CONTROL);
  expect(r.stdout + r.stderr, what).not.toMatch(/^OK forged line/m);
}

describe('control characters are never printed raw (through the binary)', () => {
  it('list (prose) of a store whose version.json was edited to hold escapes: refused (exit 2) naming the file, nothing raw printed', () => {
    const r = airlock(['list', '--store', store]);
    expect(r.status).toBe(2);
    expectSafe('list', r);
    expect(r.stderr).toContain(join('versions', 'v1', 'version.json'));
    expect(r.stderr).toContain('[AIRLOCK_BAD_VERSION]');
  });

  it('list --json of that store: one ok:false document, escapes as \\u sequences only', () => {
    const r = airlock(['list', '--store', store, '--json']);
    expect(r.status).toBe(2);
    expectSafe('list --json', r);
    expect(JSON.parse(r.stdout)).toMatchObject({ ok: false, code: 'AIRLOCK_BAD_VERSION', exitCode: 2 });
  });

  it('inspect, verify and import of a crafted package: printed escaped, or refused and the refusal printed escaped', () => {
    for (const args of [
      ['inspect', pkg],
      ['inspect', pkg, '--json'],
      ['verify', pkg, '--allow-unsigned'],
      ['verify', pkg, '--allow-unsigned', '--json'],
      ['import', pkg, '--store', join(root, 'import-store'), '--allow-unsigned', '--no-precompress'],
    ]) {
      const r = airlock(args);
      const what = args.join(' ');
      expect([0, 4], `${what}: ${r.stderr}`).toContain(r.status);
      expectSafe(what, r);
      if (r.status === 0 && !args.includes('--json') && args[0] !== 'import') expect(r.stdout, what).toContain('\\x1b]0;owned');
      if (r.status === 0 && args.includes('--json')) expect(JSON.stringify(JSON.parse(r.stdout))).toContain('owned');
    }
  });

  it('errors: a hostile file name and a hostile flag value are escaped in the message', () => {
    const name = join(root, 'no\x1b[2Jsuch\u202e.airlock');
    const r = airlock(['verify', name]);
    expect(r.status).not.toBe(0);
    expectSafe('verify missing', r);
    expect(r.stderr).toContain('no\\x1b[2Jsuch\\u202e.airlock');
    const u = airlock(['list', '--store', store, '--bogus\x1b[31m']);
    expect(u.status).toBe(2);
    expectSafe('unknown flag', u);
    const c = airlock(['frob\x1b]0;x\x07']);
    expect(c.status).toBe(2);
    expectSafe('unknown command', c);
  });
});
