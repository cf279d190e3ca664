/**
 * Hostile files where a user hands airlock a small input file — the admin key file, the mirror
 * token file of a follower, the mirror's tokens and secret files, the TLS certificate and key, the
 * values file, the download's sidecar — and hostile files in a store the mirror serves from,
 * through the built binary: a FIFO, /dev/zero through a symbolic link, a folder, a loop of symbolic
 * links and an oversize file are refused in words with a bracketed code naming the file (exit 2),
 * promptly: the process ends by itself, never a hang only the test's SIGKILL ends. A mirror keeps
 * answering requests about a version whose files are hostile.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { importPackage } from '../../src/store/index.js';
import { hashToken } from '../../src/mirror/index.js';
import { jobIdFor } from '../../src/mirror/jobs.js';
import { airlockAsync, type RunResult } from '../helpers/bin.js';
import { scratch } from '../helpers/scratch.js';
import { startAirlock, type Proc } from '../helpers/proc.js';
import { buildPackage, makeTempDir, sampleSite } from '../store/helpers.js';
import { rig } from '../fetch/emu.js';

let dir: string;
let pkg: string;
let pristine: string;

beforeAll(async () => {
  dir = await makeTempDir('airlock-input-files-hostile-');
  pkg = await buildPackage(dir, { version: 'v1', files: sampleSite('v1', 5) });
  pristine = join(dir, 'pristine');
  await importPackage(pkg, { store: pristine, trust: [], allowUnsigned: true, activate: true });
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const paths = scratch(() => dir);
const fresh = paths.fresh;
/** Far above a refusal's time even on a loaded machine (a start loads the whole CLI), far below "forever". */
const HANG_MS = 20_000;
const RAW = /\bE[A-Z]{3,}\b|Error:|Unexpected token/;

type Kind = 'fifo' | 'devzero' | 'folder' | 'loop' | 'oversize';
const KINDS: Kind[] = ['fifo', 'devzero', 'folder', 'loop', 'oversize'];
const WORDS: Record<Kind, RegExp> = {
  fifo: /is a FIFO \(named pipe\), not a regular file/,
  devzero: /is a character device, not a regular file/,
  folder: /is a folder, not a regular file/,
  loop: /is a loop of symbolic links/,
  oversize: /is \d+ bytes, more than the limit of \d+/,
};

/** A hostile file of `kind` at `path` (its folder exists); `limit` is the bound an oversize file passes by one byte. */
async function hostile(path: string, kind: Kind, limit: number): Promise<string> {
  switch (kind) {
    case 'fifo':
      execFileSync('mkfifo', [path]);
      break;
    case 'devzero':
      await symlink('/dev/zero', path);
      break;
    case 'folder':
      await mkdir(path);
      break;
    case 'loop':
      await symlink(`${path}.b`, path);
      await symlink(path, `${path}.b`);
      break;
    case 'oversize':
      await writeFile(path, 'x'.repeat(limit + 1));
      break;
  }
  return path;
}

/** The process ended by itself (not killed by the test's timer) with exit 2, said why in words with a code, and named the file. */
function refused(r: RunResult, code: string, file: string, words: RegExp, label: string): void {
  expect(r.signal, `${label}: killed: ${r.stderr}`).toBeNull();
  expect(r.status, `${label}: ${r.stderr}`).toBe(2);
  expect(r.stderr, label).toMatch(new RegExp(`\\[${code}\\]\\n?$`));
  expect(r.stderr, label).toContain(file);
  expect(r.stderr, label).toMatch(words);
  expect(r.stderr, label).not.toMatch(RAW);
}

/** Each kind of hostile file as `name` in a fresh folder, run through `run` one after the other (the machine's cores are few), refused with `code`. */
async function eachKind(name: string, limit: number, code: string, run: (file: string, d: string) => Promise<RunResult>): Promise<void> {
  for (const kind of KINDS) {
    const d = fresh(kind);
    await mkdir(d);
    const file = await hostile(join(d, name), kind, limit);
    refused(await run(file, d), code, file, WORDS[kind], `${name} as ${kind}`);
  }
}

const NO_API = { AIRLOCK_API_URL: 'http://127.0.0.1:9', AIRLOCK_ADMIN_KEY: undefined };

describe('hostile input files a user hands airlock', () => {
  it('AIRLOCK_ADMIN_KEY_FILE (fetch): refused before any request, exit 2 AIRLOCK_ADMIN_KEY_FILE', async () => {
    await eachKind('admin.key', 4096, 'AIRLOCK_ADMIN_KEY_FILE', (file, d) =>
      airlockAsync(['fetch', '--domain', 'docs.example.com', '--out', join(d, 'out')], {
        env: { ...NO_API, AIRLOCK_ADMIN_KEY_FILE: file },
        timeoutMs: HANG_MS,
      }),
    );
  }, 240_000);

  it('AIRLOCK_MIRROR_TOKEN_FILE and follow.tokenFile (serve --follow): exit 2 AIRLOCK_MIRROR_TOKEN_FILE', async () => {
    const env = { AIRLOCK_MIRROR_TOKEN: undefined };
    await eachKind('token', 4096, 'AIRLOCK_MIRROR_TOKEN_FILE', (file, d) =>
      airlockAsync(['serve', '--store', join(d, 'store'), '--follow', 'http://127.0.0.1:9', '--port', '0'], {
        env: { ...env, AIRLOCK_MIRROR_TOKEN_FILE: file },
        timeoutMs: HANG_MS,
      }),
    );
    await eachKind('token', 4096, 'AIRLOCK_MIRROR_TOKEN_FILE', async (file, d) => {
      await writeFile(join(d, 'values.yaml'), `follow:\n  url: http://127.0.0.1:9\n  tokenFile: ${JSON.stringify(file)}\n`);
      return airlockAsync(['serve', '--store', join(d, 'store'), '--values', join(d, 'values.yaml'), '--port', '0'], {
        env: { ...env, AIRLOCK_MIRROR_TOKEN_FILE: undefined },
        timeoutMs: HANG_MS,
      });
    });
  }, 240_000);

  it('the mirror tokens file (serve --mirror --mirror-tokens): exit 2 AIRLOCK_MIRROR_TOKENS', async () => {
    await eachKind('tokens', 1024 * 1024, 'AIRLOCK_MIRROR_TOKENS', async (file, d) => {
      await mkdir(join(d, 'store'));
      return airlockAsync(['serve', '--store', join(d, 'store'), '--mirror', '--mirror-tokens', file, '--port', '0'], { timeoutMs: HANG_MS });
    });
  }, 240_000);

  it('the mirror secret file (mirror.secretFile): exit 2 AIRLOCK_MIRROR_SECRET', async () => {
    await eachKind('secret', 4096, 'AIRLOCK_MIRROR_SECRET', async (file, d) => {
      await mkdir(join(d, 'store'));
      await writeFile(join(d, 'tokens'), `${hashToken('svc_mirror_' + 'k'.repeat(24))}\n`);
      await writeFile(join(d, 'values.yaml'), `mirror:\n  enabled: true\n  tokensFile: tokens\n  secretFile: ${JSON.stringify(file)}\n`);
      return airlockAsync(['serve', '--store', join(d, 'store'), '--values', join(d, 'values.yaml'), '--port', '0'], { timeoutMs: HANG_MS });
    });
  }, 240_000);

  it('the TLS certificate and key (serve --tls-cert/--tls-key): exit 2 AIRLOCK_TLS_FILE', async () => {
    await eachKind('cert.pem', 1024 * 1024, 'AIRLOCK_TLS_FILE', async (file, d) => {
      await writeFile(join(d, 'key.pem'), 'not a key\n');
      return airlockAsync(['serve', '--store', join(d, 'store'), '--tls-cert', file, '--tls-key', join(d, 'key.pem'), '--port', '0'], { timeoutMs: HANG_MS });
    });
    await eachKind('key.pem', 1024 * 1024, 'AIRLOCK_TLS_FILE', async (file, d) => {
      await writeFile(join(d, 'cert.pem'), 'not a certificate\n');
      return airlockAsync(['serve', '--store', join(d, 'store'), '--tls-cert', join(d, 'cert.pem'), '--tls-key', file, '--port', '0'], { timeoutMs: HANG_MS });
    });
  }, 240_000);

  it('the values file (serve --values): exit 2 AIRLOCK_BAD_VALUES', async () => {
    await eachKind('values.yaml', 1024 * 1024, 'AIRLOCK_BAD_VALUES', async (file, d) => {
      await mkdir(join(d, 'store'));
      return airlockAsync(['serve', '--values', file, '--store', join(d, 'store'), '--port', '0'], { timeoutMs: HANG_MS });
    });
  }, 240_000);

  it("a values file with two YAML documents: exit 2 AIRLOCK_BAD_VALUES in airlock's words, naming the line the second starts on", async () => {
    const d = fresh('multidoc');
    await mkdir(d);
    const file = join(d, 'values.yaml');
    await writeFile(file, `store: ${join(d, 'store')}\nport: 18083\n---\nport: 1\n`);
    const r = await airlockAsync(['serve', '--values', file, '--port', '0'], { timeoutMs: HANG_MS });
    refused(r, 'AIRLOCK_BAD_VALUES', file, /holds more than one YAML document; the second starts at line 3/, 'two documents');
    expect(r.stderr).not.toMatch(/parseAllDocuments|Source contains/);
  });

  it('a values file with a YAML merge key (<<: *anchor): merged as Helm does, with no unknown-key warning', async () => {
    const d = fresh('merge');
    await mkdir(d);
    const file = join(d, 'values.yaml');
    const merged = join(d, 'merged-store');
    await writeFile(file, `defaults: &d\n  store: ${merged}\n<<: *d\nport: 0\n`);
    const r = await airlockAsync(['serve', '--values', file], { cwd: d, timeoutMs: HANG_MS });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`store ${merged} does not exist`); // the store came from the merge
    expect(r.stderr).not.toContain('<<');
  });

  it('TMPDIR a FIFO, missing or a file: preview and emulate exit 2 AIRLOCK_TMPDIR naming TMPDIR in words', async () => {
    const d = fresh('tmpdir');
    await mkdir(d);
    const fifo = join(d, 'fifo');
    execFileSync('mkfifo', [fifo]);
    await writeFile(join(d, 'file'), 'x');
    for (const [what, tmp, words] of [
      ['a FIFO', fifo, /is a FIFO \(named pipe\), not a folder/],
      ['missing', join(d, 'missing'), /does not exist/],
      ['a file', join(d, 'file'), /is a (regular )?file, not a folder/],
    ] as const) {
      for (const args of [
        ['preview', pkg, '--port', '0'],
        ['emulate', '--port', '0'],
      ]) {
        const r = await airlockAsync(args, { env: { TMPDIR: tmp }, cwd: d, timeoutMs: HANG_MS });
        refused(r, 'AIRLOCK_TMPDIR', `TMPDIR ${tmp}`, words, `${args[0]} with TMPDIR ${what}`);
      }
    }
  });

  it('the download sidecar (.part.json in the out folder): not trusted, the fetch starts afresh and succeeds', async () => {
    const r = await rig();
    try {
      await Promise.all(
        (['fifo', 'devzero'] as const).map(async (kind) => {
          const out = join(r.dir, kind);
          await mkdir(out, { recursive: true });
          await hostile(join(out, '.docs.example.com.bundle.part.json'), kind, 64 * 1024);
          const run = await airlockAsync(['fetch', '--domain', 'docs.example.com', '--out', out, '--version-label', 'v1'], {
            env: { AIRLOCK_API_URL: r.emu.url, AIRLOCK_ADMIN_KEY: r.emu.keys.admin },
            timeoutMs: HANG_MS * 2,
          });
          expect(run.signal, `${kind}: killed: ${run.stderr}`).toBeNull();
          expect(run.status, `${kind}: ${run.stderr}`).toBe(0);
          expect(run.stdout.trim()).toBe(join(out, 'docs.example.com-v1.airlock'));
          expect(run.stderr).not.toMatch(RAW);
        }),
      );
    } finally {
      await r.close();
    }
  }, 240_000);
});

describe('hostile files in a store', () => {
  const copyStore = async (): Promise<string> => paths.copy(pristine);

  it('the stored manifest of the version being imported again: import ends by itself, exit 2 AIRLOCK_BAD_VERSION naming it', async () => {
    await Promise.all(
      (['fifo', 'devzero', 'folder', 'loop'] as const).map(async (kind) => {
        const store = await copyStore();
        const manifest = join(store, 'versions/v1/airlock.json');
        await rm(manifest);
        await hostile(manifest, kind, 0);
        const r = await airlockAsync(['import', pkg, '--store', store, '--allow-unsigned'], { timeoutMs: HANG_MS });
        // A store file is never followed: /dev/zero and a loop arrive as symbolic links.
        refused(
          r,
          'AIRLOCK_BAD_VERSION',
          manifest,
          kind === 'devzero' || kind === 'loop' ? /is a symbolic link \(to ".*"\), not a regular file: it is not followed/ : WORDS[kind],
          `airlock.json as ${kind}`,
        );
      }),
    );
  }, 240_000);

  it('a plain file where a version folder should be: import says so with a code (exit 2 AIRLOCK_STORE_PATH)', async () => {
    const store = await copyStore();
    await writeFile(join(store, 'versions/v2'), 'not a folder\n');
    const pkgDir = fresh('pkg');
    await mkdir(pkgDir);
    const pkg2 = await buildPackage(pkgDir, { version: 'v2', files: sampleSite('v2', 2) });
    const r = await airlockAsync(['import', pkg2, '--store', store, '--allow-unsigned'], { timeoutMs: HANG_MS });
    refused(
      r,
      'AIRLOCK_STORE_PATH',
      join(store, 'versions/v2'),
      /is a regular file, not a folder \(airlock keeps version v2's files there\)/,
      'versions/v2 as a file',
    );
  }, 240_000);

  describe('the mirror keeps answering about a version whose files are hostile', () => {
    const TOKEN = 'svc_mirror_' + 'k'.repeat(24);
    let store: string;
    let p: Proc;
    let url: string;

    /** A copy of v1 as `label`, its version.json rewritten by `edit`. */
    async function copyVersion(label: string, edit: (meta: Record<string, unknown>) => void = () => {}): Promise<string> {
      const vdir = join(store, 'versions', label);
      await cp(join(store, 'versions/v1'), vdir, { recursive: true });
      const meta = JSON.parse(await readFile(join(vdir, 'version.json'), 'utf8')) as Record<string, unknown>;
      meta.label = label;
      edit(meta);
      await writeFile(join(vdir, 'version.json'), JSON.stringify(meta));
      return vdir;
    }

    beforeAll(async () => {
      store = await copyStore();
      const hostileLater: [string, Kind][] = [];
      for (const kind of ['fifo', 'devzero'] as const) {
        // version.json hostile (readVersion)
        hostileLater.push([join(await copyVersion(`meta-${kind}`), 'version.json'), kind]);
        // the manifest hostile where pageCount must be counted (countPages)
        hostileLater.push([
          join(
            await copyVersion(`pages-${kind}`, (m) => {
              m.pageCount = null;
            }),
            'airlock.json',
          ),
          kind,
        ]);
        // package.airlock hostile where it must be hashed (a version imported from a delta: fileSha256)
        hostileLater.push([
          join(
            await copyVersion(`hash-${kind}`, (m) => {
              m.packageSha256 = null;
            }),
            'package.airlock',
          ),
          kind,
        ]);
        // package.airlock hostile where it is served (objects)
        hostileLater.push([join(await copyVersion(`object-${kind}`), 'package.airlock'), kind]);
      }
      const tokens = paths.fresh('mirror-tokens');
      await writeFile(tokens, `${hashToken(TOKEN)}\n`);
      p = startAirlock(['serve', '--store', store, '--mirror', '--mirror-tokens', tokens, '--port', '0', '--host', '127.0.0.1']);
      url = (await p.waitFor(/^http:\/\/\S+$/m))[0].replace(/\/$/, '');
      // Made hostile once the mirror serves (a serve refuses to start on a store it cannot list).
      for (const [file, kind] of hostileLater) {
        await rm(file);
        await hostile(file, kind, 0);
      }
    }, 240_000);
    afterAll(async () => {
      p?.kill('SIGTERM');
      await p?.exit();
    });

    const api = (path: string, body?: unknown) =>
      fetch(`${url}/v1/static-export/jobs${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(HANG_MS),
      });

    it('version.json a FIFO or /dev/zero: the job is answered "not found" at once', async () => {
      for (const kind of ['fifo', 'devzero']) {
        const res = await api('', { domain: 'docs.example.com', version: `meta-${kind}` });
        expect(res.status, kind).toBe(404);
        const job = await api(`/${jobIdFor(`meta-${kind}`)}`);
        expect(job.status, kind).toBe(404);
      }
      expect(p.stderr()).not.toMatch(RAW);
    }, 30_000);

    it('the manifest a FIFO or /dev/zero where pages are counted: the job is answered, 0 pages', async () => {
      for (const kind of ['fifo', 'devzero']) {
        const res = await api('', { domain: 'docs.example.com', version: `pages-${kind}` });
        expect(res.status, kind).toBe(202);
        expect(((await res.json()) as { pageCount: number }).pageCount, kind).toBe(0);
      }
    }, 30_000);

    it('package.airlock a FIFO or /dev/zero where it must be hashed: the bundle link is refused (503), named in the log in words', async () => {
      for (const kind of ['fifo', 'devzero']) {
        const res = await api(`/${jobIdFor(`hash-${kind}`)}/bundle`, {});
        expect(res.status, kind).toBe(503);
      }
      expect(p.stderr()).toMatch(/package\.airlock is a FIFO \(named pipe\), not a regular file/);
      expect(p.stderr()).toMatch(/package\.airlock is a character device, not a regular file/);
      expect(p.stderr()).not.toMatch(RAW);
    }, 30_000);

    it('package.airlock a FIFO or /dev/zero where it is served: the download is answered 404 at once', async () => {
      for (const kind of ['fifo', 'devzero']) {
        const res = await api(`/${jobIdFor(`object-${kind}`)}/bundle`, {});
        expect(res.status, kind).toBe(200);
        const link = ((await res.json()) as { packageUrl: string }).packageUrl;
        const got = await fetch(link, { signal: AbortSignal.timeout(HANG_MS) });
        expect(got.status, kind).toBe(404);
        await got.arrayBuffer();
      }
    }, 30_000);
  });
});
