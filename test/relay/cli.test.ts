import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assistantBody, fixtureStore, postJson } from './helpers.js';
import { BIN } from '../helpers/bin.js';

/** `airlock serve` relaying to `airlock emulate`, both the compiled binaries (run `npm run build` first). */
let fx: Awaited<ReturnType<typeof fixtureStore>>;
const children: ChildProcess[] = [];

beforeAll(async () => {
  fx = await fixtureStore();
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.once('exit', r));
      c.kill('SIGTERM');
      await gone;
    }
  }
});
afterAll(async () => {
  await fx?.cleanup();
});

interface Proc { child: ChildProcess; out: () => string; err: () => string; exit: Promise<number | null> }

function run(args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, AIRLOCK_API_URL: '', AIRLOCK_ASSISTANT_KEY: '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  return { child, out: () => out, err: () => err, exit: new Promise((r) => child.on('exit', (code) => r(code))) };
}

/** Wait (bounded) until stdout matches. */
async function waitFor(p: Proc, re: RegExp, ms = 15_000): Promise<RegExpExecArray> {
  const end = Date.now() + ms;
  for (;;) {
    const m = re.exec(p.out());
    if (m) return m;
    if (p.child.exitCode !== null || Date.now() > end) throw new Error(`no ${re} on stdout (exit ${p.child.exitCode}); stderr: ${p.err()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('airlock serve relaying to airlock emulate (binaries)', () => {
  it('streams the assistant answer end to end; the page points at its own origin and the CSP stays self', async () => {
    const emu = run(['emulate', '--port', '0']);
    const url = (await waitFor(emu, /listening on (http:\/\/\S+)/))[1]!;
    const keyFile = (await waitFor(emu, /assistant key file: +(\S+)/))[1]!;
    const key = (await readFile(keyFile, 'utf8')).trim();
    const srv = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'client-hosted', '--enable', 'assistant', '--assistant-url', url], { AIRLOCK_ASSISTANT_KEY: key });
    const origin = (await waitFor(srv, /^(http:\/\/\S+?)\/?\n/m))[1]!;

    const res = await postJson(`${origin}/discovery/v2/assistant/docs.example.com/message`, assistantBody());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const text = await res.text().catch((e: unknown) => {
      throw new Error(`stream broke (${String(e)}); serve stderr: ${srv.err()}; emulate stderr: ${emu.err()}`);
    });
    expect(text).toContain('"type":"text-delta"');
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);

    const page = await fetch(`${origin}/`);
    const html = await page.text();
    expect(html).toMatch(/<meta name="docs-api-base" content="\/">/);
    const connect = /connect-src ([^;]*)/.exec(page.headers.get('content-security-policy') ?? '')?.[1];
    expect(connect).toBe("'self'");
    expect(srv.out() + srv.err()).not.toContain(key);
  });

  it('a wrong key type exits 5 before listening and never prints the key', async () => {
    const admin = 'svc_admin0123456789abcdef';
    const p = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'cloud', '--assistant-url', 'http://127.0.0.1:9'], { AIRLOCK_ASSISTANT_KEY: admin });
    expect(await p.exit).toBe(5);
    expect(p.err()).toMatch(/assistant key/);
    expect(p.out() + p.err()).not.toContain(admin);
  });

  it('no key exits 5 naming AIRLOCK_ASSISTANT_KEY; no upstream URL exits 2', async () => {
    const noKey = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'cloud', '--assistant-url', 'http://127.0.0.1:9']);
    expect(await noKey.exit).toBe(5);
    expect(noKey.err()).toContain('AIRLOCK_ASSISTANT_KEY');
    const noUrl = run(['serve', '--store', fx.store, '--port', '0', '--deployment', 'client-hosted', '--enable', 'search'], { AIRLOCK_ASSISTANT_KEY: 'svc_dsc_abc123' });
    expect(await noUrl.exit).toBe(2);
    expect(noUrl.err()).toContain('--assistant-url');
  });

  it('--help documents the relay flags', async () => {
    const p = run(['serve', '--help']);
    expect(await p.exit).toBe(0);
    for (const f of ['--assistant-url', '--rate-limit-org-hour', '--rate-limit-ip-day', 'AIRLOCK_ASSISTANT_KEY']) expect(p.out() + p.err()).toContain(f);
  });
});
