/**
 * npm run bench:assistant [-- --part recall,latency --requests 200 --conversations 200 --waves 3 --pages 100 --site python]
 *
 * RECALL: on the real documentation sites of bench:search (bench/search-real.ts: fetched at
 * benchmark time, never committed), judged questions as readers ask the assistant
 * (bench/assistant/questions.json: each with the page that answers it) go through the retrieval
 * the assistant uses (the local search, its best 5), beside Pagefind over the same pages: recall@5
 * is how often the answering page is among the 5 (the sections given to the model). Goal ≥ 0.9.
 * LATENCY:
 * local-assistant (`serve --assistant-model`), against the emulator's stand-in model (an
 * OpenAI-compatible API, `airlock emulate`), both from the built CLI, on a generated site of
 * `--pages` pages (or, with `--site NAME`, a copy of that real site of RECALL, asked its judged
 * questions) whose HTML cache and search index are prepared first:
 * 1. time to first token: a question asked of the assistant endpoint, until its first `text-delta`
 *    chunk, beside the peer a user would otherwise call, the same stand-in model asked directly
 *    (`POST /v1/chat/completions`, until its first content delta) with the prompt airlock built for
 *    that question (the same sections, the same size). `--requests` pairs, alternating which goes
 *    first, one at a time; p50 and p95 of each, and of airlock's added time (each pair's
 *    difference). Goal: added time ≤ 50 ms at p95.
 * 2. memory: `--conversations` conversations at once (each its own `fp`, each asked twice, the
 *    second time with its `threadId`), `--waves` waves of them, the server's VmRSS at rest before and
 *    after each (polled until stable): what the first wave costs (the heap grown to serve them at
 *    once) and what the later waves add (the threads kept, which are bounded).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { generatedStore } from './generated-store.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
const BIN = join(HERE, '..', 'dist', 'src', 'cli', 'bin.js');
const DOMAIN = 'docs.example.com';
const { values: args } = parseArgs({
  options: {
    requests: { type: 'string', default: '200' },
    conversations: { type: 'string', default: '200' },
    waves: { type: 'string', default: '3' },
    pages: { type: 'string', default: '100' },
    part: { type: 'string', default: 'recall,latency' },
    site: { type: 'string', default: '' },
  },
});
const parts = new Set(args.part!.split(','));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Proc {
  child: ChildProcess;
  url: string;
}

/** Start the built CLI and wait for the first URL it prints on stdout. */
async function start(argv: string[]): Promise<Proc> {
  const child = spawn(process.execPath, [BIN, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /https?:\/\/[^\s/]+/.exec(out);
      if (m) resolve(m[0]);
    });
    child.once('exit', (code) => reject(new Error(`airlock ${argv[0]} exited ${code} before printing its URL`)));
  });
  return { child, url };
}

function stop(p: Proc): Promise<void> {
  if (p.child.exitCode !== null) return Promise.resolve();
  return new Promise((r) => {
    p.child.once('exit', () => r());
    p.child.kill('SIGTERM');
  });
}

async function buildStore(work: string, pages: number, from?: string): Promise<string> {
  const { store, files } = await generatedStore(work, pages, from);
  // What the server would prepare in the background, done first: the air-gapped HTML cache and the search index.
  const { prebuildHtmlCache } = (await import(pathToFileURL(join(BIN, '..', '..', 'serve', 'index.js')).href)) as typeof import('../src/serve/index.js');
  const { loadOrBuild, searchablePages } = await import('../src/search/build.js');
  await prebuildHtmlCache(store, 'bench-1');
  const version = join(store, 'versions', 'bench-1');
  await loadOrBuild({ siteDir: join(version, 'site'), pages: searchablePages(files), cacheDir: join(version, 'search') });
  return store;
}

/** POST a JSON body; ms until the first SSE event `first` accepts, then the rest of the body read. */
async function firstEvent(url: string, body: unknown, first: (data: string) => boolean): Promise<{ ms: number; status: number; text: string }> {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  if (res.status !== 200) return { ms: NaN, status: res.status, text: await res.text() };
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ms = NaN;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
    if (Number.isNaN(ms) && text.split('\n\n').some((e) => e.startsWith('data: ') && first(e.slice(6)))) ms = performance.now() - t0;
  }
  return { ms, status: 200, text };
}

const question = (q: string, fp: string, threadId?: string) => ({
  fp,
  messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: q }] }],
  ...(threadId ? { threadId } : {}),
});
let QUESTIONS = ['How do I rotate an access token?', 'How are webhooks signed?', 'What does the changelog export?', 'How do I configure the dashboard?'];
const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!;
const rssKb = (pid: number) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? NaN);

async function stableRss(pid: number): Promise<number> {
  const samples = [rssKb(pid)];
  for (let i = 0; i < 40; i++) {
    await sleep(500);
    samples.push(rssKb(pid));
    const last = samples.slice(-5);
    if (last.length === 5 && Math.max(...last) - Math.min(...last) < 0.01 * Math.max(...last)) break;
  }
  return samples.at(-1)!;
}

async function recall(): Promise<void> {
  const { judgedPart } = await import('./search-real.js');
  const { searchQuery } = await import('../src/assistant/query.js');
  const scores = await judgedPart('bench/assistant/questions.json', searchQuery, { anyWords: true }); // as the assistant asks (src/assistant/route.ts)
  for (const s of scores) console.log(`recall@5 (${s.engine}): ${s.top5.toFixed(2)}${s.engine === 'airlock' ? '   goal ≥ 0.9' : ''}`);
}

async function main(): Promise<void> {
  if (parts.has('recall')) await recall();
  if (!parts.has('latency')) return;
  const work = await mkdtemp(join(tmpdir(), 'airlock-bench-assistant-'));
  const procs: Proc[] = [];
  try {
    let from: string | undefined;
    if (args.site) {
      from = await (await import('./search-real.js')).realSite(args.site);
      const judged = JSON.parse(readFileSync(join(HERE, 'assistant', 'questions.json'), 'utf8')) as { queries: Array<{ site: string; q: string }> };
      QUESTIONS = judged.queries.filter((j) => j.site === args.site).map((j) => j.q);
    }
    const store = await buildStore(work, Number(args.pages), from);
    console.log(`latency: ${from ? `the real site ${args.site}, its ${QUESTIONS.length} judged questions` : `a generated site of ${args.pages} pages`}`);
    const emu = await start(['emulate', '--port', '0', '--keys-dir', join(work, 'keys')]);
    procs.push(emu);
    const model = `${emu.url}/v1`;
    const isText = (d: string) => d.includes('"type":"text-delta"');
    const isContent = (d: string) => /"content":"[^"]/.test(d);
    // The prompt airlock builds for each question, for the direct calls: recorded by a first server
    // whose model calls pass through a recording relay; the measured server calls the model itself.
    const prompts = new Map<string, string>();
    const recorder = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const sent = JSON.parse(body) as { messages: Array<{ role: string; content: string }> };
        prompts.set(sent.messages.at(-1)!.content, body);
        void fetch(`${model}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body }).then(async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'text/event-stream' });
          res.end(Buffer.from(await r.arrayBuffer()));
        });
      });
    });
    await new Promise<void>((r) => recorder.listen(0, '127.0.0.1', () => r()));
    const recorded = await start([
      'serve',
      '--store',
      store,
      '--port',
      '0',
      '--assistant-model',
      `http://127.0.0.1:${(recorder.address() as AddressInfo).port}/v1`,
      '--assistant-model-name',
      'stand-in',
    ]);
    for (const q of QUESTIONS) {
      for (let i = 0; i < 100 && !prompts.has(q); i++) {
        const r = await firstEvent(`${recorded.url}/discovery/v2/assistant/${DOMAIN}/message`, question(q, 'record'), isText);
        if (r.status !== 200) await sleep(200); // the index loading: asked again
      }
      if (!prompts.has(q)) throw new Error(`no prompt recorded for ${q}`);
    }
    await stop(recorded);
    recorder.close();
    const srv = await start(['serve', '--store', store, '--port', '0', '--assistant-model', model, '--assistant-model-name', 'stand-in']);
    procs.push(srv);
    const endpoint = `${srv.url}/discovery/v2/assistant/${DOMAIN}/message`;
    for (let i = 0; i < 100 && (await firstEvent(endpoint, question('ready', 'ready'), isText)).status !== 200; i++) await sleep(200);
    const ms = (v: number) => `${v.toFixed(2)} ms`;
    // Each question once on the fresh server: its pages not read yet (what the first reader to ask it waits).
    const cold: number[] = [];
    for (const [i, q] of QUESTIONS.entries()) {
      const x = await firstEvent(endpoint, question(q, `cold-${i}`), isText);
      const y = await firstEvent(`${model}/chat/completions`, JSON.parse(prompts.get(q)!), isContent);
      cold.push(x.ms - y.ms);
    }
    console.log(`each question asked once, first (its pages not read yet): added by airlock ${ms(pct(cold, 50))} median, ${ms(Math.max(...cold))} at most`);
    // Warm both paths (connections, JIT), then measure in pairs.
    for (let i = 0; i < 10; i++) {
      await firstEvent(endpoint, question(QUESTIONS[i % QUESTIONS.length]!, `warm-${i}`), isText);
      await firstEvent(`${model}/chat/completions`, JSON.parse(prompts.get(QUESTIONS[i % QUESTIONS.length]!)!), isContent);
    }
    const through: number[] = [];
    const direct: number[] = [];
    const added: number[] = [];
    for (let i = 0; i < Number(args.requests); i++) {
      const q = QUESTIONS[i % QUESTIONS.length]!;
      const a = () => firstEvent(endpoint, question(q, `fp-${i}`), isText);
      const b = () => firstEvent(`${model}/chat/completions`, JSON.parse(prompts.get(q)!), isContent);
      let x, y;
      if (i % 2 === 0) {
        x = await a();
        y = await b();
      } else {
        y = await b();
        x = await a();
      }
      if (x.status !== 200 || y.status !== 200) throw new Error(`a request failed: ${x.status} ${x.text.slice(0, 200)} / ${y.status}`);
      through.push(x.ms);
      direct.push(y.ms);
      added.push(x.ms - y.ms);
    }
    console.log(`time to first token, ${through.length} pairs (p50 / p95):`);
    console.log(`  through airlock (retrieval, prompt, model, UI message stream): ${ms(pct(through, 50))} / ${ms(pct(through, 95))}`);
    console.log(`  the stand-in model asked directly (the same prompt):          ${ms(pct(direct, 50))} / ${ms(pct(direct, 95))}`);
    console.log(`  added by airlock (each pair's difference):                    ${ms(pct(added, 50))} / ${ms(pct(added, 95))}   goal ≤ 50 ms at p95`);

    // Waves of conversations: what the first costs (a heap grown to serve them at once) and
    // whether more of them keep costing (kept threads are bounded: 10 turns each, 10,000 threads).
    const pid = srv.child.pid!;
    const n = Number(args.conversations);
    const waves = Math.max(2, Number(args.waves));
    const rss = [await stableRss(pid)];
    // As a reader's panel does: a 503 (the search busy under this many questions at once) is asked again after its Retry-After.
    let retried = 0;
    const asked = async (q: string, fp: string, threadId?: string) => {
      for (let attempt = 0; ; attempt++) {
        const r = await firstEvent(endpoint, question(q, fp, threadId), isText);
        if (r.status !== 503 || attempt === 20) return r;
        retried++;
        await sleep(1000); // the Retry-After of a busy search
      }
    };
    for (let wave = 0; wave < waves; wave++) {
      await Promise.all(
        Array.from({ length: n }, async (_, i) => {
          const fp = `conv-${wave}-${i}`;
          const first = await asked(QUESTIONS[i % QUESTIONS.length]!, fp);
          const threadId = /"threadId":"([^"]+)"/.exec(first.text)?.[1];
          if (first.status !== 200 || !threadId) throw new Error(`conversation ${fp} failed: ${first.status} ${first.text.slice(0, 200)}`);
          const second = await asked('and then?', fp, threadId);
          if (!second.text.includes('"delta":"Following'))
            throw new Error(`conversation ${fp} did not continue its thread: ${second.status} ${second.text.slice(0, 200)}`);
        }),
      );
      rss.push(await stableRss(pid));
    }
    const mb = (kb: number) => `${(kb / 1024).toFixed(1)} MB`;
    console.log(
      `memory: ${n} conversations at once, each continued once, in ${waves} waves (${waves * n} threads kept in all; ${retried} questions answered 503 and asked again):`,
    );
    console.log(`  VmRSS at rest: ${rss.map(mb).join(' → ')}`);
    console.log(
      `  the first wave: ${(((rss[1]! - rss[0]!) * 1024) / n / 1024).toFixed(1)} KB per conversation; the next ${waves - 1}: ${(((rss[waves]! - rss[1]!) * 1024) / ((waves - 1) * n) / 1024).toFixed(1)} KB per conversation`,
    );
  } finally {
    for (const p of procs.reverse()) await stop(p);
    await rm(work, { recursive: true, force: true });
  }
}

await main();
