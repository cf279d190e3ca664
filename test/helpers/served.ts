/**
 * Start the built binary as a server (serve, preview) and crawl what it serves: shared by the
 * CLI tests of real exports. Only 127.0.0.1; every wait is bounded.
 */
import { request } from 'node:http';
import { start, type Running } from '../mirror/helpers.js';

export interface RunningBin extends Running {
  origin: string;
}

/** `airlock ARGS` as a server (test/mirror/helpers.ts `start`), with its origin and no AIRLOCK_STORE from the caller. */
export async function startBin(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 60_000): Promise<RunningBin> {
  const r = await start(args, { AIRLOCK_STORE: undefined, ...env }, timeoutMs);
  return { ...r, origin: r.url };
}

export interface Answer {
  status: number;
  location: string | undefined;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/** One GET, no redirect followed. */
export function get(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(url, { headers, timeout: 30_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, location: res.headers.location, body: Buffer.concat(chunks), headers: res.headers }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

/** GET a path; a 308 is followed once (serving rules: any redirect is a single 308 to a page of the site). */
export async function reach(origin: string, path: string): Promise<{ first: Answer; final: Answer; hops: string[] }> {
  const first = await get(origin + path);
  if (first.status !== 308) return { first, final: first, hops: [] };
  const loc = first.location!;
  if (!loc.startsWith('/') || loc.startsWith('//')) throw new Error(`${path}: redirect leaves the site: ${loc}`);
  const final = await get(origin + loc);
  return { first, final, hops: [loc] };
}

const LINK = /\s(?:href|src)="(\/(?!\/)[^"#]*)(?:#[^"]*)?"/g;
const REFRESH = /<meta http-equiv="refresh" content="\d+;\s*url=([^"]+)"/i;

/** Root-relative links of a page, and its meta-refresh target if it is a redirect stub. */
export function linksOf(html: string): { links: string[]; refresh: string | null } {
  return { links: [...new Set([...html.matchAll(LINK)].map((m) => m[1]!.replace(/&amp;/g, '&')))], refresh: REFRESH.exec(html)?.[1] ?? null };
}

/**
 * Breadth-first over the site's own links from `start`: every link must answer 200 directly or
 * after exactly one 308, and a stub's meta refresh must land on a page that is not a stub (no
 * redirect loop through pages). Returns the problems found (empty when the site is whole).
 */
export async function crawl(origin: string, start: string, maxPages: number): Promise<{ pages: number; links: number; problems: string[] }> {
  const seen = new Set<string>([start]);
  const queue = [start];
  const problems: string[] = [];
  let pages = 0;
  let links = 0;
  while (queue.length > 0 && pages < maxPages) {
    const path = queue.shift()!;
    const r = await reach(origin, path);
    links++;
    if (r.final.status !== 200) {
      problems.push(`${path}: ${r.first.status}${r.hops.length ? ` -> ${r.hops[0]} ${r.final.status}` : ''}`);
      continue;
    }
    const type = String(r.final.headers['content-type'] ?? '');
    if (!type.startsWith('text/html')) continue;
    pages++;
    const { links: found, refresh } = linksOf(r.final.body.toString('utf8'));
    if (refresh !== null) {
      const t = await reach(origin, refresh);
      if (t.final.status !== 200) problems.push(`${path}: stub to ${refresh} answers ${t.final.status}`);
      else if (linksOf(t.final.body.toString('utf8')).refresh !== null) problems.push(`${path}: stub to ${refresh} lands on another stub`);
    }
    for (const l of found) {
      if (!seen.has(l)) {
        seen.add(l);
        queue.push(l);
      }
    }
  }
  return { pages, links, problems };
}
