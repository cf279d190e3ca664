/**
 * The service's static-export and agent-job API exactly as published (the service's API
 * as published, documented examples included), on a plain node:http server on 127.0.0.1: the documented example
 * bodies verbatim — 202 with the whole job record and `error: null`, `se_` ids, 409 `{error}`
 * before completion, `{error}` with 400/401/403/404 — plus fields the documentation does not name
 * (a newer service adds some). Written from the documentation alone, independently of
 * src/emulator, so the client is checked against the published facts and not against our own
 * stand-in. Every answer can be replaced (the fuzz tests serve mutants through it).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { siteFiles, tgz } from './evil-archives.js';

export const DOC_KEY = 'svc_published_api_test_key_0001';
export const DOC_FORBIDDEN_KEY = 'svc_published_api_no_export_0002';
export const DOC_JOB_ID = 'se_3f9a2c1b8e7d4a06';
export const DOC_DOMAIN = 'docs.example.com';
export const DOC_CREATED_AT = '2025-06-01T12:00:00Z';
export const DOC_PROJECT = 'prj_7c1d';
export const DOC_AGENT_COMPLETED = 'agj_done';
export const DOC_AGENT_FAILED = 'agj_broken';
/** What the documented job record looks like (and fields the documentation does not list). */
export const docJob = (status: string, progress: number, pageCount: number, error: string | null = null) => ({
  jobId: DOC_JOB_ID,
  status,
  progress,
  pageCount,
  createdAt: DOC_CREATED_AT,
  updatedAt: '2025-06-01T12:00:05Z',
  error,
  organizationId: 'org_42',
  links: { self: `/v1/static-export/jobs/${DOC_JOB_ID}` },
});
export const docAgentJob = (id: string, status: string, prLink: string | null) => ({
  id,
  status,
  source: { repository: 'example/docs', ref: 'main' },
  model: 'agent-model-1',
  prLink,
  createdAt: DOC_CREATED_AT,
  archivedAt: status === 'archived' ? '2025-06-02T00:00:00Z' : null,
  projectId: DOC_PROJECT,
  steps: [{ name: 'plan' }],
});

/** How many single-element arrays nest at `v` (the mutation fuzzer's "deep" values), counted without recursion. */
function arrayDepth(v: unknown): number {
  let d = 0;
  for (let x = v; Array.isArray(x) && x.length === 1; x = (x as unknown[])[0]) d++;
  return d;
}

/**
 * JSON text of an answer body, even one nested thousands deep (JSON.stringify would overflow the
 * stack on those: they are written as text instead).
 */
export function jsonText(body: unknown): string {
  const deep: string[] = [];
  const text = JSON.stringify(body, (_k, v: unknown) => {
    const d = arrayDepth(v);
    if (d < 100) return v;
    let inner = v;
    for (let i = 0; i < d; i++) inner = (inner as unknown[])[0];
    deep.push('['.repeat(d) + JSON.stringify(inner) + ']'.repeat(d));
    return `\u0000deep${deep.length - 1}\u0000`;
  }) as string | undefined;
  return (text ?? '').replace(/"\\u0000deep(\d+)\\u0000"/g, (_m, i: string) => deep[Number(i)]!);
}

export type Route = 'create' | 'job' | 'bundle' | 'agent' | 'object';
export interface Answer {
  status: number;
  body: unknown;
  raw?: boolean;
}
export interface PublishedApi {
  url: string;
  archive: Buffer;
  /** Replace the answer of a route: `n` counts that route's calls from 0. Return undefined for the documented one. */
  answers: Partial<Record<Route, (n: number) => Answer | undefined>>;
  calls: Array<{ route: Route | 'unknown'; method: string; path: string; status: number; auth: string | undefined; body: string }>;
  /** Start over: call counters, the job's progress and the call log. */
  reset(): void;
  close(): Promise<void>;
}

/** The documented bundle answer of a running server (its link points at that server's object route). */
export const docBundle = (api: PublishedApi) => ({
  jobId: DOC_JOB_ID,
  bundleUrl: `${api.url}/exports/${DOC_JOB_ID}/bundle.tar.gz?X-Amz-Signature=abc&X-Amz-Expires=900`,
  sizeBytes: api.archive.length,
  expiresAt: new Date(Date.now() + 900_000).toISOString(),
});

export interface PublishedApiOptions {
  failed?: boolean;
  bundle409First?: number;
  immediate?: boolean;
}

/** `failed`: the job fails; `bundle409First`: that many 409s first; `immediate`: the first GET already says completed. */
export async function startPublishedApi(o: PublishedApiOptions = {}): Promise<PublishedApi> {
  const archive = tgz(siteFiles('site/'));
  const counts: Record<string, number> = {};
  const api: PublishedApi = {
    url: '',
    archive,
    answers: {},
    calls: [],
    close: async () => {},
    reset() {
      for (const k of Object.keys(counts)) delete counts[k];
      api.calls.length = 0;
    },
  };

  const documented = (route: Route, n: number, req: IncomingMessage, body: string): Answer => {
    if (route === 'create') {
      let parsed: unknown;
      try {
        parsed = JSON.parse(body);
      } catch {
        return { status: 400, body: { error: 'Request body must be JSON' } };
      }
      const domain = (parsed as { domain?: unknown } | null)?.domain;
      if (typeof domain !== 'string') return { status: 400, body: { error: 'domain is required' } };
      if (domain !== DOC_DOMAIN) return { status: 404, body: { error: `Domain ${domain} not found` } };
      return { status: 202, body: docJob('queued', 0, 0) };
    }
    if (route === 'job') {
      if (!req.url!.endsWith(`/${DOC_JOB_ID}`)) return { status: 404, body: { error: 'Job not found' } };
      if (n === 0 && !o.immediate) return { status: 200, body: docJob('running', 40, 1) };
      if (o.failed) return { status: 200, body: docJob('failed', 50, 1, 'Build failed: page guide/install.mdx has invalid frontmatter') };
      return { status: 200, body: docJob('completed', 100, 3) };
    }
    if (route === 'bundle') {
      if (!req.url!.includes(`/${DOC_JOB_ID}/`)) return { status: 404, body: { error: 'Job not found' } };
      // Complete once the job was shown complete (its second GET, or the first with `immediate`).
      const completed = !o.failed && (counts.job ?? -1) >= (o.immediate ? 0 : 1);
      if (!completed || n < (o.bundle409First ?? 0)) return { status: 409, body: { error: 'Job is not completed yet' } };
      return { status: 200, body: docBundle(api) };
    }
    const id = decodeURIComponent(req.url!.split('/').pop() ?? '');
    if (!req.url!.startsWith(`/v2/agent/${DOC_PROJECT}/job/`)) return { status: 404, body: { error: 'Project not found' } };
    if (id === DOC_AGENT_COMPLETED)
      return { status: 200, body: n === 0 ? docAgentJob(id, 'active', null) : docAgentJob(id, 'completed', 'https://github.com/example/docs/pull/17') };
    if (id === DOC_AGENT_FAILED) return { status: 200, body: n === 0 ? docAgentJob(id, 'active', null) : docAgentJob(id, 'failed', null) };
    return { status: 404, body: { error: 'Agent job not found' } };
  };

  const routeOf = (req: IncomingMessage): Route | 'unknown' => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (req.method === 'POST' && path === '/v1/static-export/jobs') return 'create';
    if (req.method === 'GET' && /^\/v1\/static-export\/jobs\/[^/]+$/.test(path)) return 'job';
    if (req.method === 'POST' && /^\/v1\/static-export\/jobs\/[^/]+\/bundle$/.test(path)) return 'bundle';
    if (req.method === 'GET' && /^\/v2\/agent\/[^/]+\/job\/[^/]+$/.test(path)) return 'agent';
    if (req.method === 'GET' && path.startsWith('/exports/')) return 'object';
    return 'unknown';
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const route = routeOf(req);
      const auth = req.headers.authorization;
      const send = (a: Answer) => {
        api.calls.push({ route, method: req.method ?? '', path: req.url ?? '', status: a.status, auth, body });
        const text = a.raw ? String(a.body) : jsonText(a.body);
        res.writeHead(a.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
      };
      if (route === 'object') {
        // Presigned object storage: no Authorization header may arrive here.
        api.calls.push({ route, method: 'GET', path: req.url ?? '', status: auth ? 400 : 200, auth, body });
        if (auth) return void res.writeHead(400).end('<Error><Code>InvalidArgument</Code></Error>');
        return void res.writeHead(200, { 'content-type': 'application/gzip', 'content-length': archive.length }).end(archive);
      }
      if (route === 'unknown') return send({ status: 404, body: { error: 'Not found' } });
      if (auth !== `Bearer ${DOC_KEY}` && auth !== `Bearer ${DOC_FORBIDDEN_KEY}`) return send({ status: 401, body: { error: 'Invalid API key' } });
      if (auth === `Bearer ${DOC_FORBIDDEN_KEY}` && route !== 'agent')
        return send({ status: 403, body: { error: 'Static export is not enabled for this organization' } });
      const n = (counts[route] = (counts[route] ?? -1) + 1);
      send(api.answers[route]?.(n) ?? documented(route, n, req, body));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  return api;
}

/** What an answer-fuzz test file works with: one server for all its tests and output folders in one temp folder. */
export interface FuzzApi {
  readonly api: PublishedApi;
  /** A path for the next run's output folder (not made yet). */
  out(): string;
  /** Start over (reset) and answer `route` with `make`'s answers only. */
  serve(route: Route, make: (n: number) => Answer | undefined): void;
}

/** The server and temp folder of an answer-fuzz test file: started before its tests, closed and removed after them. */
export function fuzzApiForFile(tmpPrefix: string, o: PublishedApiOptions = {}): FuzzApi {
  let api: PublishedApi | undefined;
  let root: string | undefined;
  let runs = 0;
  beforeAll(async () => {
    api = await startPublishedApi(o);
    root = await mkdtemp(join(tmpdir(), tmpPrefix));
  });
  afterAll(async () => {
    await api?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });
  return {
    get api() {
      return api!;
    },
    out: () => join(root!, `run-${runs++}`),
    serve(route, make) {
      api!.reset();
      api!.answers = { [route]: make };
    },
  };
}

const PART = `.${DOC_DOMAIN}.bundle.part`;

/** What a fetch leaves in `out`: exactly one package when it succeeded, else nothing but the resumable part and its sidecar. */
export async function expectFetchLeftovers(out: string, succeeded: boolean, what: string): Promise<void> {
  const left = await readdir(out).catch(() => [] as string[]);
  if (succeeded)
    expect(
      left.filter((f) => f.endsWith('.airlock')),
      what,
    ).toHaveLength(1);
  else
    expect(
      left.filter((f) => f !== PART && f !== `${PART}.json`),
      what,
    ).toEqual([]);
}
