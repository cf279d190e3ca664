import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { appendAudit, auditPaths, readAudit, verifyAudit } from '../../src/store/audit.js';
import { auditHistory } from '../../src/store/audit/chain.js';
import { makeTempDir } from './helpers.js';

let dir: string;
beforeAll(async () => {
  dir = await makeTempDir('airlock-audit-');
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

let n = 0;
async function logWith(lines: number): Promise<string> {
  const store = join(dir, `s${++n}`);
  await mkdir(store);
  for (let i = 0; i < lines; i++) await appendAudit(store, { command: 'test', outcome: 'ok', detail: `event ${i}` });
  return store;
}
const textLines = async (store: string) => (await readFile(auditPaths(store).log, 'utf8')).split('\n').slice(0, -1);
const rewrite = (store: string, lines: string[]) => writeFile(auditPaths(store).log, lines.map((l) => l + '\n').join(''));

describe('audit log hash chain (trust policy, several signers)', () => {
  it('a fresh chain verifies, each line naming the one before', async () => {
    const store = await logWith(5);
    const r = await verifyAudit(store);
    expect(r).toMatchObject({ ok: true, lines: 5, pending: false });
    const lines = await readAudit(store);
    expect(lines.map((l) => l.n)).toEqual([1, 2, 3, 4, 5]);
    expect(lines[0]!.prevHash).toBe('0'.repeat(64));
    expect(lines[1]!.prevHash).not.toBe(lines[0]!.prevHash);
    expect(typeof lines[0]!.user).toBe('string');
  });

  it('deleted line: detected', async () => {
    const store = await logWith(5);
    const lines = await textLines(store);
    await rewrite(store, [...lines.slice(0, 2), ...lines.slice(3)]);
    expect(await verifyAudit(store)).toMatchObject({ ok: false, lines: 2 });
  });

  it('edited line: detected (in the middle, and the last one)', async () => {
    const store = await logWith(5);
    const lines = await textLines(store);
    await rewrite(
      store,
      lines.map((l, i) => (i === 2 ? l.replace('event 2', 'event X') : l)),
    );
    expect((await verifyAudit(store)).problem).toMatch(/line 4 does not follow line 3/);
    await rewrite(
      store,
      lines.map((l, i) => (i === 4 ? l.replace('event 4', 'event Y') : l)),
    );
    expect((await verifyAudit(store)).problem).toMatch(/line 5, the last acknowledged one, does not match/);
  });

  it('truncated tail: detected from the head, and appends are refused until someone looks', async () => {
    const store = await logWith(5);
    const lines = await textLines(store);
    await rewrite(store, lines.slice(0, 3));
    expect((await verifyAudit(store)).problem).toMatch(/truncated tail/);
    await expect(appendAudit(store, { command: 'test', outcome: 'ok' })).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4 });
    await rm(auditPaths(store).head);
    expect((await verifyAudit(store)).ok).toBe(false); // removing the head is no way out
  });

  it('torn tail (a crash mid-append): detected, then removed and recorded by the next append', async () => {
    const store = await logWith(3);
    await writeFile(auditPaths(store).log, '{"n":4,"time":"2026', { flag: 'a' });
    expect((await verifyAudit(store)).problem).toMatch(/torn bytes after line 3/);
    await appendAudit(store, { command: 'test', outcome: 'ok', detail: 'after the crash' });
    const lines = await readAudit(store);
    expect(lines.map((l) => l.outcome)).toEqual(['ok', 'ok', 'ok', 'repaired', 'ok']);
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 5 });
  });

  it('zeros after the last line (a file system that grew the file before a crash wrote it): repaired, and the repair records their sha256', async () => {
    const store = await logWith(2);
    await writeFile(auditPaths(store).log, Buffer.alloc(40), { flag: 'a' });
    await appendAudit(store, { command: 'test', outcome: 'ok' });
    const repaired = (await readAudit(store)).find((l) => l.outcome === 'repaired');
    expect(repaired?.detail).toContain(`removed 40 unacknowledged bytes after line 2 (sha256 ${createHash('sha256').update(Buffer.alloc(40)).digest('hex')}`);
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 4 });
  });

  it('a line cut inside a character (the first byte of a two-byte letter): still what a crash leaves, repaired', async () => {
    const store = await logWith(2);
    await writeFile(auditPaths(store).log, Buffer.concat([Buffer.from('{"n":3,"time":"2026","detail":"caf'), Buffer.from('é').subarray(0, 1)]), { flag: 'a' });
    await appendAudit(store, { command: 'test', outcome: 'ok' });
    expect((await readAudit(store)).map((l) => l.outcome)).toEqual(['ok', 'ok', 'repaired', 'ok']);
  });

  it('bytes after the last line that no crash leaves (not the start of the next line): a break, never removed', async () => {
    const bad = ['garbage', '{"n":3,"hello"', '{"n":30,"time"', '\u0000\u0000x', '{"n":3,"time":"2026-\ttab', '{"n":3,"time":"x"}{"n":4,"time"'];
    // A character cut at the end that no completion makes valid UTF-8: a surrogate's start, a code point past U+10FFFF.
    const cut = [
      [0xed, 0xa0],
      [0xf4, 0x90],
      [0xe0, 0x80],
    ].map((b) => Buffer.from([...Buffer.from('{"n":3,"time":"2026-'), ...b]));
    for (const tail of [...bad, Buffer.from([...Buffer.from('{"n":3,"time":"2026-'), 0xff]), ...cut]) {
      const store = await logWith(2);
      await writeFile(auditPaths(store).log, tail, { flag: 'a' });
      const size = (await readFile(auditPaths(store).log)).length;
      expect((await verifyAudit(store)).problem, String(tail)).toMatch(/bytes after line 2 \(from byte \d+\) are not what an append cut short leaves/);
      await expect(appendAudit(store, { command: 'test', outcome: 'ok' }), String(tail)).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4 });
      expect((await readFile(auditPaths(store).log)).length, String(tail)).toBe(size);
    }
  });

  it('a crash between the line and the head: the complete line is pending, then adopted', async () => {
    const store = await logWith(2);
    const head = await readFile(auditPaths(store).head);
    await appendAudit(store, { command: 'test', outcome: 'ok', detail: 'written, not acknowledged' });
    await writeFile(auditPaths(store).head, head); // as if killed before the head was replaced
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 3, pending: true });
    await appendAudit(store, { command: 'test', outcome: 'ok' });
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 4, pending: false });
    expect((await readAudit(store)).map((l) => l.outcome)).not.toContain('repaired');
  });

  it('a head deleted in a store that holds records: a break that still reports how many lines chain and the last hash', async () => {
    const store = await logWith(3);
    const whole = await verifyAudit(store);
    await rm(auditPaths(store).head);
    await mkdir(join(store, 'versions', 'v1'), { recursive: true });
    expect(await verifyAudit(store)).toMatchObject({
      ok: false,
      lines: 3,
      lastHash: whole.lastHash,
      problem: expect.stringMatching(/audit\.head is missing$/),
    });
  });

  it('a first line without its head, no one appending: a break in a store that holds records (a log cut to its first line never passes for a new one); in one that holds none, the crash of the command that created it (pending, then adopted)', async () => {
    for (const holds of [true, false]) {
      const store = await logWith(3);
      const first = (await readFile(auditPaths(store).log, 'utf8')).split('\n')[0] + '\n';
      await writeFile(auditPaths(store).log, first);
      await rm(auditPaths(store).head);
      if (holds) await mkdir(join(store, 'versions', 'v1'), { recursive: true });
      if (holds) {
        expect(await verifyAudit(store)).toMatchObject({ ok: false, problem: expect.stringMatching(/audit\.head is missing/) });
        await expect(appendAudit(store, { command: 'test', outcome: 'ok' })).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4 });
        expect(await readFile(auditPaths(store).log, 'utf8')).toBe(first);
      } else {
        expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 1, pending: true });
        await appendAudit(store, { command: 'test', outcome: 'ok' });
        expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 2, pending: false });
      }
    }
  });

  it('the log removed from a store that holds versions: broken (exit 4), and no append starts a new log over it', async () => {
    const store = await logWith(2);
    await mkdir(join(store, 'versions', 'v1'), { recursive: true });
    await rm(auditPaths(store).log);
    await rm(auditPaths(store).head);
    expect(await verifyAudit(store)).toMatchObject({ ok: false, problem: expect.stringMatching(/audit\.log is missing but the store holds versions/) });
    await expect(appendAudit(store, { command: 'test', outcome: 'ok' })).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN', exitCode: 4 });
    expect(existsSync(auditPaths(store).log)).toBe(false);
  });

  it('concurrent appends (one store, many writers) keep one unbroken chain', async () => {
    const store = await logWith(0);
    await Promise.all(Array.from({ length: 12 }, (_, i) => appendAudit(store, { command: 'test', outcome: 'ok', detail: `w${i}` })));
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 12 });
  });

  it('readers outside the lock (verify, trust show, a pre-lock admission) never call a healthy log broken while another process appends', async () => {
    const auditJs = fileURLToPath(new URL('../../dist/src/store/audit.js', import.meta.url));
    const store = await logWith(0); // a new store: the first line is written before its head exists
    const script = `const m = await import(${JSON.stringify(auditJs)});
      process.stdout.write('go\\n');
      for (let i = 0; i < 150; i++) await m.appendAudit(${JSON.stringify(store)}, { command: 'child', outcome: 'ok', detail: 'x'.repeat(i % 500) });`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let running = true;
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => ((running = false), r(code))));
    await new Promise((r) => child.stdout.once('data', r));
    const alarms: string[] = [];
    let reads = 0;
    while (running) {
      const r = await verifyAudit(store);
      if (!r.ok) alarms.push(r.problem!);
      await auditHistory(store).catch((err: Error) => alarms.push(err.message));
      reads++;
    }
    expect(await exited).toBe(0);
    expect(reads).toBeGreaterThan(10);
    expect(alarms).toEqual([]);
    expect(await verifyAudit(store)).toMatchObject({ ok: true, lines: 150 });
  }, 60_000);

  it('a log cut to its first line with its head deleted, while some live process holds the store lock but writes no head: still a break (a lock is no licence)', async () => {
    const lockJs = fileURLToPath(new URL('../../dist/src/store/lock.js', import.meta.url));
    const store = await logWith(3);
    const first = (await readFile(auditPaths(store).log, 'utf8')).split('\n')[0] + '\n';
    await writeFile(auditPaths(store).log, first);
    await rm(auditPaths(store).head);
    const script = `const m = await import(${JSON.stringify(lockJs)});
      await m.acquireLock(${JSON.stringify(store)});
      process.stdout.write('held\\n');
      setInterval(() => {}, 1000);`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const exited = new Promise<boolean>((r) => child.once('exit', () => r(false)));
      expect(await Promise.race([new Promise<boolean>((r) => child.stdout.once('data', () => r(true))), exited])).toBe(true);
      const t0 = Date.now();
      expect(await verifyAudit(store)).toMatchObject({ ok: false, problem: expect.stringMatching(/audit\.head is missing/) });
      await expect(auditHistory(store)).rejects.toMatchObject({ code: 'AIRLOCK_AUDIT_BROKEN' });
      // It waited a moment for the head a real first append writes, and no longer.
      expect(Date.now() - t0).toBeLessThan(15_000);
    } finally {
      child.kill('SIGKILL');
    }
  }, 30_000);

  it('kill -9 during appends: the chain still verifies or the torn tail is detected, and the next append recovers', async () => {
    const auditJs = fileURLToPath(new URL('../../dist/src/store/audit.js', import.meta.url));
    const store = await logWith(1);
    // The child says 'go' once its first append is acknowledged, so every round's kill lands among
    // appends (and leaves at least that line) however slowly the child starts.
    const script = `const m = await import(${JSON.stringify(auditJs)});
      for (let i = 0; i < 100000; i++) {
        await m.appendAudit(${JSON.stringify(store)}, { command: 'child', outcome: 'ok', detail: 'x'.repeat(i % 3000) });
        if (i === 0) process.stdout.write('go\\n');
      }`;
    let torn = 0;
    for (let round = 0; round < 6; round++) {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
      // Listened for from the start, so a child that ends on its own cannot leave the test waiting.
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      // A child that dies before its first append never says 'go': that fails here instead of hanging.
      const going = await Promise.race([new Promise<boolean>((r) => child.stdout.once('data', () => r(true))), exited.then(() => false)]);
      expect(going).toBe(true);
      await new Promise((r) => setTimeout(r, 40 + round * 37));
      child.kill('SIGKILL');
      await exited;
      const r = await verifyAudit(store);
      if (!r.ok) {
        expect(r.problem).toMatch(/torn bytes/);
        torn++;
      }
      // The lock a killed writer held is taken over; the tail is adopted or repaired.
      await appendAudit(store, { command: 'test', outcome: 'ok', detail: `after kill ${round}` }, { timeoutMs: 10_000 });
      expect((await verifyAudit(store)).ok).toBe(true);
    }
    const lines = await readAudit(store, 1_000_000);
    expect(lines.filter((l) => l.outcome === 'repaired')).toHaveLength(torn);
    // Each round's acknowledged first append survived the kill and the repair after it.
    expect(lines.filter((l) => l.command === 'child').length).toBeGreaterThanOrEqual(6);
  }, 60_000);
});
