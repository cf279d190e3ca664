import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { startAirlock, type Proc } from '../helpers/proc.js';
import { airlock } from '../helpers/bin.js';
import { makePackage } from '../helpers/make-package.js';
import { cleanup, tempRoot } from '../serve/helpers.js';

/**
 * Signals from the first instruction: a Ctrl-C in the first instant of `airlock import` used to
 * end it with no word (killed by SIGINT, the shell's 130). The signal is sent the moment the
 * process's own handlers exist: its SigCgt mask in /proc shows SIGHUP caught (the runtime catches
 * SIGINT and SIGTERM from boot to restore the terminal, but not SIGHUP; airlock traps all three at
 * once, before loading anything). The command says what it interrupted and what that left, and
 * exits with the code its --help documents.
 */
let root: string;
let pkg: string;
beforeAll(async () => {
  root = await tempRoot('airlock-signals-start-');
  pkg = (await makePackage({ outDir: join(root, 'pkg'), version: 'v1' })).pkgPath;
});
afterAll(async () => cleanup(root));

/** Resolves once the process catches `signo` (bounded by a deadline); false if it exited first. */
async function catches(p: Proc, signo: number, deadlineMs = 60_000): Promise<boolean> {
  const end = Date.now() + deadlineMs;
  const bit = 1n << BigInt(signo - 1);
  while (Date.now() < end) {
    if (p.child.exitCode !== null || p.child.signalCode !== null) return false;
    const status = await readFile(`/proc/${p.child.pid}/status`, 'utf8').catch(() => '');
    const mask = /^SigCgt:\s*([0-9a-f]+)$/m.exec(status)?.[1];
    if (mask && (BigInt(`0x${mask}`) & bit) !== 0n) return true;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`pid ${p.child.pid} did not trap signal ${signo} within ${deadlineMs} ms`);
}

const SIGHUP = 1;

/**
 * Start the command and signal it the moment its trap is in place. A command that fails fast (a
 * store that does not exist) may end before this test's first look at it on a loaded machine:
 * that start does not count, and the command is started again (at most 5 times).
 */
async function interruptAtStart(args: string[], sig: 'SIGINT' | 'SIGTERM') {
  for (let attempt = 1; attempt <= 5; attempt++) {
    const p = startAirlock(args, { cwd: root });
    if (!(await catches(p, SIGHUP))) {
      await p.exit(60_000);
      continue;
    }
    p.kill(sig);
    return { ...(await p.exit(60_000)), stderr: p.stderr(), stdout: p.stdout() };
  }
  throw new Error(`airlock ${args[0]} ended before its signal trap was seen, 5 times out of 5`);
}

describe('signals from the first instant', () => {
  it('import: SIGINT at once is exit 1 saying nothing was added; the store is not created', async () => {
    const store = join(root, 'store-import');
    const r = await interruptAtStart(['import', pkg, '--store', store, '--allow-unsigned'], 'SIGINT');
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(1);
    // Where the signal lands depends on how fast the runtime starts: before the command (nothing
    // started) or inside it (after its first progress lines); either way the last line says so.
    expect(r.stderr).toMatch(
      /(^|\n)airlock import: error: interrupted by SIGINT; (before it started; nothing was changed|nothing was added to store .*; it is as it was) \[AIRLOCK_INTERRUPTED\]\n$/,
    );
    expect(existsSync(store)).toBe(false);
  });

  it('list: SIGTERM at once is exit 1 saying nothing was changed', async () => {
    const r = await interruptAtStart(['list', '--store', join(root, 'none')], 'SIGTERM');
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(1);
    expect(r.stderr).toMatch(
      /^airlock list: error: interrupted by SIGTERM; (?:before it started; |it only reads: )nothing was changed \[AIRLOCK_INTERRUPTED\]\n$/,
    );
  });

  it('serve: SIGINT at once is its documented stop, exit 0, said in words', async () => {
    const r = await interruptAtStart(['serve', '--store', join(root, 'none'), '--port', '0'], 'SIGINT');
    expect(r.signal, r.stderr).toBeNull();
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^airlock serve: stopped by SIGINT( before it started; nothing was changed)?\n$/);
  });

  it('the top-level --help documents it', () => {
    const help = airlock(['--help']).stdout.replace(/\s+/g, ' ');
    expect(help).toContain('exits 1 (AIRLOCK_INTERRUPTED); the servers (serve, preview, emulate, demo) stop with 0');
    expect(help).toContain('once Node.js has started');
  });
});
