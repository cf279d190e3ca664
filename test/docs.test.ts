/**
 * The README and every guide in docs/ run as written. Each page's `sh` blocks run in order, in one
 * fresh bash (`set -eu`), in a fresh empty folder (not the clone: a reader who installed the
 * tarball has no clone), with `airlock` on PATH, as a reader pastes them. The pages' fixed ports
 * (8080–8099) are swapped for free ones, since the pages run side by side.
 *
 * Not run: a block whose fence is preceded by the line `<!-- doc-test: skip: REASON -->`. That
 * marks commands that belong to a clone or install globally (`npm ci`, `npm link`, `npm install
 * -g`); the README's two set-up commands come before its first section and are checked
 * separately. Every docs/*.md is picked up by itself, so a new guide is run with no change here.
 *
 * Every page runs once, against the package as users get it: `npm pack` of a staging copy of the
 * clone (package files and the production dependencies only), installed once for this file with
 * `npm install -g --offline` and an empty npm cache, so no registry is reached. That one pass
 * covers both the built command and the installed one: the tarball's dist/ is the clone's build,
 * copied and not rebuilt, so the code that runs is the same, and what differs (the files the
 * package ships, its production dependencies, its paths) is exactly what this pass checks. A
 * block that only worked beside a clone (a chart, a fixture, a guide outside the package) fails
 * here. The README's first run also runs against the built command of the clone, the way a
 * reader who ran `npm ci && npm run build` meets it (dist/ beside the clone's fixtures).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from './helpers/bin.js';

const ROOT = join(import.meta.dirname, '..');
const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((n) => n.endsWith('.md'))
    .sort()
    .map((n) => `docs/${n}`),
];
const SKIP = /^<!-- doc-test: skip: (.+?) -->\n$/;

interface Block {
  code: string;
  skip: string | null;
}

function blocksOf(text: string): Block[] {
  return [...text.matchAll(/(^<!-- doc-test: skip: .+? -->\n)?^```sh\n([\s\S]*?)^```$/gm)].map((m) => ({
    code: m[2]!,
    skip: m[1] ? SKIP.exec(m[1])![1]! : null,
  }));
}

const read = (page: string): string => readFileSync(join(ROOT, page), 'utf8');
const README = read('README.md');
const scratch = mkdtempSync(join(tmpdir(), 'airlock-docs-'));
const groups = new Set<number>();
afterAll(() => {
  // A session cut short by the test's own time limit must not outlive the test.
  for (const g of groups)
    try {
      process.kill(-g, 'SIGKILL');
    } catch {
      /* already gone */
    }
  rmSync(scratch, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as { port: number };
  await new Promise((r) => s.close(r));
  return port;
}

/** At most this many pages at once: the machine has two cores and the pages start servers. */
let running = 0;
const queue: (() => void)[] = [];
async function slot<T>(f: () => Promise<T>): Promise<T> {
  if (running >= 3) await new Promise<void>((r) => queue.push(r));
  running++;
  try {
    return await f();
  } finally {
    running--;
    queue.shift()?.();
  }
}

interface Session {
  status: number | null;
  stdout: string;
  stderr: string;
  leftover: boolean;
  ms: number;
  dir: string;
}

async function runScript(name: string, script: string, binDir: string, timeoutMs: number): Promise<Session> {
  const dir = mkdtempSync(join(scratch, `${name.replace(/\W+/g, '-')}-`));
  const work = join(dir, 'work');
  mkdirSync(join(dir, 'tmp'), { recursive: true });
  mkdirSync(work);
  const ports = new Map<string, string>();
  for (const p of new Set(script.match(/\b80[89]\d\b/g) ?? [])) ports.set(p, String(await freePort()));
  script = script.replace(/\b80[89]\d\b/g, (p) => ports.get(p)!);
  writeFileSync(join(dir, 'session.sh'), `set -eu\n${script}\necho DOC-SESSION-DONE\n`);
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: `${binDir}:${process.env.PATH}`, TMPDIR: join(dir, 'tmp') };
  for (const k of Object.keys(env)) if (k.startsWith('AIRLOCK_')) delete env[k];
  const started = Date.now();
  const child = spawn('bash', [join(dir, 'session.sh')], { cwd: work, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  groups.add(child.pid!);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => process.kill(-child.pid!, 'SIGKILL'), timeoutMs);
  const status = await new Promise<number | null>((r) => child.on('close', r));
  clearTimeout(timer);
  const ms = Date.now() - started;
  // Whatever the session left running (it should leave nothing) goes with its process group.
  let leftover = true;
  try {
    process.kill(-child.pid!, 'SIGKILL');
  } catch {
    leftover = false;
  }
  groups.delete(child.pid!);
  return { status, stdout, stderr, leftover, ms, dir: work };
}

function runnable(page: string): string {
  const blocks = blocksOf(read(page)).filter((b) => b.skip === null);
  // The README's set-up commands (before its first section) run in the clone, not here.
  const skipHead = page === 'README.md' ? 1 : 0;
  return blocks
    .slice(skipHead)
    .map((b) => b.code)
    .join('\n');
}

function expectClean(s: Session): void {
  expect(s.status, `${s.stdout}\n${s.stderr}`).toBe(0);
  expect(s.stdout).toContain('DOC-SESSION-DONE');
  expect(s.leftover, 'a server of the session was still running').toBe(false);
  expect(s.stderr).not.toMatch(/AIRLOCK_INTERNAL|\bError:|at .*\.js:\d+/);
}

function wrapper(dir: string): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'airlock'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
  chmodSync(join(dir, 'airlock'), 0o755);
  return dir;
}

describe('README', () => {
  it('opens with the two commands a new user runs: npm ci && npm run demo, npm ci && npm test', () => {
    const first = blocksOf(README)[0]!
      .code.split('\n')
      .map((l) => l.replace(/\s+#.*$/, ''));
    expect(first.slice(0, 2)).toEqual(['npm ci && npm run demo', 'npm ci && npm test']);
    expect(README.indexOf('```sh')).toBeLessThan(README.indexOf('\n## '));
  });

  it('links every guide in docs/, and every guide links back to the README', () => {
    const guides = readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md'));
    for (const g of guides) {
      expect(README, `README links docs/${g}`).toContain(`](docs/${g})`);
      expect(read(`docs/${g}`), `docs/${g} links the README`).toContain('](../README.md)');
    }
  });

  it('no page cites an issue number, a commit, an internal document, or a command block as text', () => {
    for (const page of PAGES) {
      const text = read(page);
      expect(text, page).not.toMatch(/\bissues? \d+|\bCONTRACT\b|\bstop \d+|\bcommit [0-9a-f]{7,}/i);
      expect(text, page).not.toMatch(/^```text\n(airlock|npm|curl) /m);
      for (const b of blocksOf(text)) expect(b.code, `${page}: examples listen on 127.0.0.1`).not.toMatch(/--host 0\.0\.0\.0|^host: 0\.0\.0\.0/m);
    }
  });

  it('a wait for a server that failed to start gives up at once and fails its block', async () => {
    // The README's own wait, over a store that does not exist: serve exits 2 at once.
    const block = blocksOf(README).find((b) => b.code.includes('airlock serve --port'))!.code;
    const wait = block.slice(block.indexOf('airlock serve --port'));
    const s = await runScript('failed-wait', wait, wrapper(join(scratch, 'bin-fail')), 60_000);
    expect(s.status, s.stdout + s.stderr).not.toBe(0);
    expect(s.stderr).toContain('AIRLOCK_NO_STORE');
    expect(s.ms).toBeLessThan(20_000);
  }, 90_000);
});

/** The README's first run: its server answered, its package was carried, its store activated v1, and nothing was left behind. */
function expectReadme(s: Session): void {
  expect(s.stdout).toMatch(/HTTP\/1\.1 200 OK/i);
  const [first] = readdirSync(join(s.dir, '..', 'tmp')).filter((n) => n.startsWith('tmp.'));
  const st = join(s.dir, '..', 'tmp', first!);
  expect(existsSync(join(st, 'carry', 'docs.example.com-v1.airlock'))).toBe(true);
  expect(JSON.parse(readFileSync(join(st, 'store', 'state.json'), 'utf8')).active).toBe('v1');
  expect(existsSync(join(st, 'keys')), 'emulate removes its key folder when stopped').toBe(false);
}

describe('the npm tarball, installed once: every page runs as written against it', () => {
  let prefix = '';
  let installMs = 0;
  beforeAll(() => {
    // A staging copy of what a clean clone holds after `npm ci && npm run build`: the package's
    // files and its production dependencies (the clone's node_modules may be a link, which npm
    // does not bundle from).
    const stage = join(scratch, 'stage');
    const pkg = JSON.parse(read('package.json')) as { files: string[] };
    mkdirSync(stage);
    for (const f of ['package.json', 'package-lock.json', '.npmrc', ...pkg.files.filter((f) => !f.startsWith('!'))]) {
      mkdirSync(dirname(join(stage, f)), { recursive: true });
      cpSync(join(ROOT, f), join(stage, f), { recursive: true });
    }
    const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
    for (const [p, v] of Object.entries(lock.packages)) {
      if (!p || v.dev || v.devOptional || p.split('node_modules/').length > 2) continue;
      cpSync(join(ROOT, p), join(stage, p), { recursive: true });
    }
    const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', scratch], { cwd: stage, encoding: 'utf8', timeout: 120_000 });
    expect(packed.status, packed.stderr).toBe(0);
    const tgz = readdirSync(scratch).find((n) => /^airlock-docs-.*\.tgz$/.test(n));
    expect(tgz).toBeDefined();
    prefix = join(scratch, 'prefix');
    const t0 = Date.now();
    const inst = spawnSync(
      'npm',
      ['install', '-g', '--prefix', prefix, '--offline', '--cache', join(scratch, 'npm-cache'), '--no-audit', '--no-fund', join(scratch, tgz!)],
      { cwd: scratch, encoding: 'utf8', timeout: 240_000, env: { ...process.env, npm_config_registry: 'http://127.0.0.1:9/' } },
    );
    installMs = Date.now() - t0;
    expect(inst.status, inst.stdout + inst.stderr).toBe(0);
  }, 420_000);

  it('installs with no registry and an empty cache, and runs --version', () => {
    const v = spawnSync(join(prefix, 'bin', 'airlock'), ['--version'], { encoding: 'utf8', timeout: 30_000 });
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout.trim()).toBe(JSON.parse(read('package.json')).version);
    const installed = join(prefix, 'lib', 'node_modules', 'airlock-docs');
    for (const f of ['README.md', 'LICENSE', 'CHANGELOG.md', 'docs/design.md', 'fixtures/site']) expect(existsSync(join(installed, f)), f).toBe(true);
    console.log(`offline install: ${installMs} ms`);
  });

  describe.concurrent('pages', () => {
    // Pages with no `sh` block (benchmarks, design, decisions) have nothing to run.
    for (const page of PAGES.filter((p) => runnable(p).trim() !== '')) {
      it(`${page} against the installed command`, async () => {
        const s = await slot(() => runScript(`tarball-${page}`, runnable(page), join(prefix, 'bin'), 240_000));
        expectClean(s);
        if (page === 'README.md') expectReadme(s);
      }, 300_000);
    }

    it("the README's first run against the built command of the clone", async () => {
      const s = await slot(() => runScript('README', runnable('README.md'), wrapper(join(scratch, 'bin')), 240_000));
      expectClean(s);
      expectReadme(s);
    }, 300_000);
  });
});
