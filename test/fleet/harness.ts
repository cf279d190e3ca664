import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { Agent, request } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { start, tokensFile, type Running } from '../mirror/helpers.js';
import { addVersion, FLEET_TOKEN, makeSigner, PAGES, sitePackage, type Signer } from './rig.js';

/**
 * A fleet on 127.0.0.1 for the fleet test and bench:fleet: one mirror (`airlock serve --mirror`),
 * N replicas (`airlock serve --follow`, each with its own empty store), nginx in front as the
 * load balancer (a child process with its own prefix, config, pid and error log in the temp dir),
 * and a load of readers that fetch a page, keep it open a moment, then fetch the assets it names.
 */
export const NGINX = ['/usr/sbin/nginx', '/usr/bin/nginx'].find((p) => existsSync(p)) ?? 'nginx';

export interface Fleet {
  dir: string;
  signer: Signer;
  mirrorStore: string;
  mirror: Running;
  replicas: Running[];
  lb: string;
  /** Import and activate `label` on the mirror: the rollout starts. */
  roll(label: string): Promise<void>;
  ready(url: string): Promise<ReadyBody>;
  stop(): Promise<void>;
}
export interface ReadyBody {
  version: string;
  follow?: { lastSwitch: { version: string; atMs: number } | null; mirror_state: string };
}

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

export async function startNginx(
  dir: string,
  upstreams: string[],
): Promise<{ url: string; child: ChildProcess; stop(): Promise<void>; errors(): Promise<string> }> {
  const prefix = join(dir, 'nginx');
  await mkdir(join(prefix, 'tmp'), { recursive: true });
  const port = await freePort();
  const conf = join(prefix, 'nginx.conf');
  const asRoot = process.getuid?.() === 0 ? 'user root;\n' : '';
  await writeFile(
    conf,
    `${asRoot}worker_processes 1;
pid ${prefix}/nginx.pid;
error_log ${prefix}/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${prefix}/tmp/body; proxy_temp_path ${prefix}/tmp/proxy;
  fastcgi_temp_path ${prefix}/tmp/fastcgi; uwsgi_temp_path ${prefix}/tmp/uwsgi; scgi_temp_path ${prefix}/tmp/scgi;
  upstream airlock {
${upstreams.map((u) => `    server ${new URL(u).host};`).join('\n')}
    keepalive 32;
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://airlock;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`,
  );
  const child = spawn(NGINX, ['-p', prefix, '-e', join(prefix, 'error.log'), '-c', conf, '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  const t0 = Date.now();
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited ${child.exitCode}: ${stderr}`);
    const ok = await new Promise<boolean>((r) =>
      request(url + '/_airlock/health', { agent: false }, (res) => {
        res.resume();
        r(res.statusCode === 200);
      })
        .on('error', () => r(false))
        .end(),
    );
    if (ok) break;
    if (Date.now() - t0 > 10_000) throw new Error(`nginx did not answer: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
    errors: () => readFile(join(prefix, 'error.log'), 'utf8').catch(() => ''),
  };
}

export async function startFleet(o: { dir: string; replicas: number; pollMs: number; leadMs: number; replicaArgs?: string[] }): Promise<Fleet> {
  const dir = o.dir;
  const signer = await makeSigner(join(dir, 'signer'));
  const mirrorStore = join(dir, 'mirror-store');
  await addVersion(mirrorStore, await sitePackage(dir, 'v1', signer), signer, true);
  const tokens = await tokensFile(join(dir, 'mirror-tokens'), [FLEET_TOKEN]);
  const procs: Running[] = [];
  let nginx: Awaited<ReturnType<typeof startNginx>> | null = null;
  const stopAll = async () => {
    await nginx?.stop();
    await Promise.all(procs.map((p) => p.stop()));
  };
  try {
    const mirror = await start(['serve', '--store', mirrorStore, '--mirror', '--mirror-tokens', tokens, '--fleet-lead-ms', String(o.leadMs), '--port', '0']);
    procs.push(mirror);
    const env = { AIRLOCK_MIRROR_TOKEN: FLEET_TOKEN };
    const replicas = await Promise.all(
      Array.from({ length: o.replicas }, (_, i) =>
        start(
          [
            'serve',
            '--store',
            join(dir, `replica-${i}`),
            '--follow',
            mirror.url,
            '--trust',
            signer.pubPath,
            '--follow-poll-ms',
            String(o.pollMs),
            '--port',
            '0',
            ...(o.replicaArgs ?? []),
          ],
          env,
          60_000,
        ),
      ),
    );
    procs.push(...replicas);
    nginx = await startNginx(
      dir,
      replicas.map((r) => r.url),
    );
    const ready = async (url: string) => {
      const r = await fetch(url + '/_airlock/ready');
      return (await r.json()) as ReadyBody;
    };
    return {
      dir,
      signer,
      mirrorStore,
      mirror,
      replicas,
      lb: nginx.url,
      ready,
      roll: async (label) => addVersion(mirrorStore, await sitePackage(dir, label, signer), signer, true),
      stop: stopAll,
    };
  } catch (err) {
    await stopAll();
    throw err;
  }
}

export interface LoadStats {
  requests: number;
  failed: number;
  asset404: number;
  pages: Map<string, number>;
  latencies: number[];
  errors: string[];
}

/**
 * `readers` concurrent readers until `signal` (bounded by `maxMs`): a page, a pause of up to
 * `holdMs` (a reader with the page open), then every asset the page names. A failed request is a
 * network error or a status other than 200; an asset 404 is counted apart.
 */
export async function runLoad(url: string, o: { readers: number; holdMs: number; maxMs: number; signal: AbortSignal }): Promise<LoadStats> {
  const agent = new Agent({ keepAlive: true, maxSockets: o.readers * 2 });
  const s: LoadStats = { requests: 0, failed: 0, asset404: 0, pages: new Map(), latencies: [], errors: [] };
  const get = (path: string) =>
    new Promise<{ status: number; body: string; version: string }>((resolve) => {
      const t0 = performance.now();
      const req = request(url + path, { agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (body += c));
        res.on('end', () => {
          s.latencies.push(performance.now() - t0);
          resolve({ status: res.statusCode ?? 0, body, version: String(res.headers['x-airlock-version'] ?? '') });
        });
        res.on('error', (e) => resolve({ status: 0, body: String(e), version: '' }));
      });
      req.on('error', (e) => resolve({ status: 0, body: String(e), version: '' }));
      req.end();
    });
  const note = (what: string) => {
    if (s.errors.length < 20) s.errors.push(what);
  };
  const end = Date.now() + o.maxMs;
  const reader = async (i: number) => {
    let n = i;
    while (!o.signal.aborted && Date.now() < end) {
      const page = '/' + PAGES[n++ % PAGES.length]!.replace(/\.html$/, '');
      const p = await get(page);
      s.requests++;
      if (p.status !== 200) {
        s.failed++;
        note(`${page}: ${p.status} ${p.body.slice(0, 100)}`);
        continue;
      }
      const v = /data-version="([^"]+)"/.exec(p.body)?.[1] ?? '?';
      s.pages.set(v, (s.pages.get(v) ?? 0) + 1);
      if (o.holdMs > 0) await new Promise((r) => setTimeout(r, Math.random() * o.holdMs));
      const assets = [...p.body.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
      for (const a of assets) {
        const r = await get(a);
        s.requests++;
        if (r.status === 404) {
          s.asset404++;
          note(`${a} (page of ${v}): 404 from ${r.version}`);
        } else if (r.status !== 200) {
          s.failed++;
          note(`${a}: ${r.status}`);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: o.readers }, (_, i) => reader(i)));
  agent.destroy();
  return s;
}

export const percentile = (xs: number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
