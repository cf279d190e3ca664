import { mkdtemp, mkdir, rm, writeFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { connect } from 'node:net';
import { request } from 'node:http';
import { afterEach } from 'vitest';
import type { AirlockServer } from '../../src/serve/index.js';
import { appendAudit } from '../../src/store/audit/append.js';

/**
 * Stores written by hand in the layout of docs/design.md "src/store", so the server is tested
 * on exactly what it reads, independent of the importer.
 */
export type SiteFiles = Record<string, string | Buffer>;

export async function tempRoot(prefix = 'airlock-serve-'): Promise<string> {
  return mkdtemp(join(tmpdir(), prefix));
}

export const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

export async function writeVersion(
  store: string,
  label: string,
  files: SiteFiles,
  o: { variants?: boolean; importedAt?: string; domain?: string } = {},
): Promise<void> {
  // As airlock does: the version's audit line first (a store with versions but no log has lost its log).
  await mkdir(store, { recursive: true });
  await appendAudit(store, { command: 'test', outcome: 'ok', detail: `hand-made version ${label}` });
  const dir = join(store, 'versions', label);
  const records: Array<{ path: string; size: number; sha256: string }> = [];
  const variants: Record<string, { br?: number; gz?: number }> = {};
  for (const [path, data] of Object.entries(files)) {
    const buf = Buffer.from(data);
    const digest = sha256(buf);
    await mkdir(dirname(join(dir, 'site', path)), { recursive: true });
    await writeFile(join(dir, 'site', path), buf);
    records.push({ path, size: buf.length, sha256: digest });
    if (o.variants !== false && /\.(html|css|js|json|svg|txt)$/.test(path) && buf.length > 0) {
      await mkdir(join(dir, 'variants'), { recursive: true });
      const br = brotliCompressSync(buf);
      const gz = gzipSync(buf);
      await writeFile(join(dir, 'variants', `${digest}.br`), br);
      await writeFile(join(dir, 'variants', `${digest}.gz`), gz);
      variants[digest] = { br: br.length, gz: gz.length };
    }
  }
  records.sort((a, b) => (a.path < b.path ? -1 : 1));
  const manifest = {
    format: 'airlock-package/1',
    domain: o.domain ?? 'docs.example.com',
    version: label,
    jobId: null,
    createdAt: '2025-01-01T00:00:00Z',
    pageCount: 3,
    archive: { name: 'bundle.tar.gz', format: 'tar.gz', size: 1, sha256: '0'.repeat(64) },
    files: records,
  };
  await writeFile(join(dir, 'airlock.json'), JSON.stringify(manifest));
  const meta = {
    label,
    domain: o.domain ?? 'docs.example.com',
    importedAt: o.importedAt ?? '2025-01-02T03:04:05.000Z',
    packageSha256: 'a'.repeat(64),
    archive: { name: 'bundle.tar.gz', format: 'tar.gz', offset: 1536, size: 1, sha256: '0'.repeat(64) },
    signer: null,
    pageCount: 3,
    fileCount: records.length,
    totalBytes: records.reduce((n, r) => n + r.size, 0),
  };
  await writeFile(join(dir, 'version.json'), JSON.stringify(meta));
  if (o.variants !== false) {
    await mkdir(join(dir, 'variants'), { recursive: true });
    await writeFile(join(dir, 'variants', 'index.json'), JSON.stringify({ format: 1, files: variants }));
  }
}

export async function setActive(store: string, label: string | null): Promise<void> {
  const tmp = join(store, `.state.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`);
  await writeFile(tmp, JSON.stringify({ active: label, previous: null, updatedAt: new Date().toISOString() }));
  await rename(tmp, join(store, 'state.json'));
}

/** A labelled page: each version's pages carry the label, to detect mixed responses. */
export function labelledSite(label: string): SiteFiles {
  return {
    'index.html': `<!doctype html><title>home ${label}</title><p>version=${label}</p>`,
    'guide/intro.html': `<!doctype html><title>intro</title><p>version=${label}</p>`,
    'guide/index.html': `<!doctype html><p>guide index version=${label}</p>`,
    '404.html': `<!doctype html><p>not found page version=${label}</p>`,
  };
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  raw: string;
}

/** Send bytes exactly as given (no client normalises the path) and read one response to EOF. */
export function rawRequest(port: number, text: string | Buffer, timeoutMs = 5000): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const sock = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error('raw request timed out'));
    }, timeoutMs);
    sock.on('data', (c) => chunks.push(c));
    sock.on('error', reject);
    sock.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks);
      const sep = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, sep === -1 ? all.length : sep).toString('latin1');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: sep === -1 ? Buffer.alloc(0) : all.subarray(sep + 4), raw: all.toString('latin1') });
    });
    sock.write(text);
  });
}

export const rawGet = (port: number, target: string, extra = '') =>
  rawRequest(port, `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`);

export interface Resp {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export function get(url: string, headers: Record<string, string> = {}, method = 'GET'): Promise<Resp> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.setTimeout(5000, () => req.destroy(new Error(`timeout: ${url}`)));
    req.on('error', reject);
    req.end();
  });
}

export async function cleanup(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
}

/** The temp root and the servers a test starts: `srv` and every one in `servers`. */
export interface ServeCase {
  root: string | undefined;
  srv: AirlockServer | undefined;
  servers: AirlockServer[];
}

/**
 * After each test of a file: close the servers and remove the temp root of the returned case, and
 * forget them, so the next test starts with none.
 */
export function serveCaseAfterEach(): ServeCase {
  const c: ServeCase = { root: undefined, srv: undefined, servers: [] };
  afterEach(async () => {
    const servers = [c.srv, ...c.servers.splice(0)];
    const root = c.root;
    c.srv = undefined;
    c.root = undefined;
    for (const s of servers) await s?.close();
    if (root) await cleanup(root);
  });
  return c;
}
