import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash, sign } from 'node:crypto';
import { access, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { airlock, airlockAsync } from '../helpers/bin.js';
import { makeArchive } from '../helpers/make-package.js';
import { get, startBin } from '../helpers/served.js';
import { treeDigest } from '../store/helpers.js';
import { auditCount, expectRefusalLogged } from '../store/audit-expect.js';
import { assemble, membersOf, type Member } from '../package/craft.js';
import { loadPrivateKey } from '../../src/package/keys.js';
import { rig } from '../fetch/emu.js';
import { CDN_CSS_URL, CDN_JS_URL, FONT_CSS_URL, machineFont, startFakeCdn, vendorSite, type FakeCdn } from '../helpers/fake-cdn.js';

/**
 * Vendoring through the built binary: `pack --vendor` (fetch shares the code path after the
 * download) → verify → import → serve, with "the internet" on 127.0.0.1 reached through
 * `--vendor-mirror`; and the refusals, each named after the attack, with the store unchanged.
 */
let dir: string;
let key: string;
let archive: string;
let cdn: FakeCdn;
let vendored: string; // a signed package made with --vendor fonts,styles,scripts
let plainPkg: string; // the same export, label p0, without --vendor
let n = 0;
const fresh = async () => {
  const d = join(dir, `case-${++n}`);
  await mkdir(d, { recursive: true });
  return d;
};
const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );

async function writeSite(root: string, files: Record<string, string>): Promise<void> {
  for (const [p, c] of Object.entries(files)) {
    await mkdir(dirname(join(root, p)), { recursive: true });
    await writeFile(join(root, p), c);
  }
}

async function pack(out: string, label: string, extra: string[]) {
  return airlockAsync(
    ['pack', archive, '--domain', 'docs.example.com', '--version-label', label, '--sign-key', `${key}.key`, '--out', out, '--json', ...extra],
    { timeoutMs: 60_000 },
  );
}

/** Re-sign a package whose manifest was edited (the attacker holds no key: a tampered package with a VALID signature tests the checks after the signature). */
async function resigned(src: string, out: string, edit: (m: Record<string, unknown>) => void, members?: (ms: Member[]) => Member[]): Promise<string> {
  const ms = await membersOf(src);
  const m = JSON.parse(ms[0]!.data.toString()) as Record<string, unknown>;
  edit(m);
  const data = Buffer.from(JSON.stringify(m, null, 2) + '\n');
  const signer = await loadPrivateKey(`${key}.key`);
  const rest = ms.slice(2);
  await assemble(out, [{ name: 'airlock.json', data }, { name: 'airlock.json.sig', data: sign(null, data, signer) }, ...(members ? members(rest) : rest)]);
  return out;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'airlock-vendor-cli-'));
  key = join(dir, 'signer');
  expect(airlock(['keygen', '--out', key]).status).toBe(0);
  const site = join(dir, 'site');
  // A page two folders deep links the site stylesheet by a relative path; the same bytes one
  // folder deeper name another file (/guide/css/site.css), which is not carried.
  const relPage = '<!DOCTYPE html><html><head><title>Deep</title><link rel="stylesheet" href="../../css/site.css"></head><body><p>deep</p></body></html>';
  await writeSite(site, { ...vendorSite(), 'guide/deep/page.html': relPage, 'guide/deep/more/page.html': relPage });
  archive = join(dir, 'export.tar.gz');
  await makeArchive(site, 'tar.gz', archive);
  cdn = await startFakeCdn();
  const p = await pack(join(dir, 'made'), 'v1', ['--vendor', 'fonts,styles,scripts', ...cdn.mirrors]);
  expect(p.status, p.stderr).toBe(0);
  vendored = (JSON.parse(p.stdout) as { package: string }).package;
  const q = await pack(join(dir, 'made'), 'p0', []);
  expect(q.status, q.stderr).toBe(0);
  plainPkg = (JSON.parse(q.stdout) as { package: string }).package;
}, 60_000);
afterAll(async () => {
  await cdn?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('pack --vendor → verify → import → serve', () => {
  it('carries the web font, the CDN stylesheets (with what they import and name) and the script, signed in the manifest', async () => {
    const v = airlock(['verify', vendored, '--trust', `${key}.pub`, '--json']);
    expect(v.status, v.stderr).toBe(0);
    expect(JSON.parse(v.stdout)).toMatchObject({ vendored: 7 });
    expect(airlock(['verify', vendored, '--trust', `${key}.pub`]).stdout).toMatch(/7 vendored third-party files match too/);
    // A second signature (airlock sign) keeps the vendored members byte for byte.
    const cosigned = join(dir, 'cosigned.airlock');
    await writeFile(cosigned, await readFile(vendored));
    expect(airlock(['keygen', '--out', join(dir, 'second')]).status).toBe(0);
    const s2 = airlock(['sign', cosigned, '--key', join(dir, 'second.key')]);
    expect(s2.status, s2.stderr).toBe(0);
    expect(airlock(['verify', cosigned, '--trust', join(dir, 'second.pub')]).status).toBe(0);
    const m = JSON.parse((await membersOf(vendored))[0]!.data.toString()) as {
      vendor: Array<{ path: string; kind: string; urls: string[]; site?: string[]; sha256: string; size: number }>;
    };
    const byUrl = (u: string) => m.vendor.find((r) => r.urls.includes(u));
    expect(byUrl(FONT_CSS_URL)?.kind).toBe('fonts');
    expect(byUrl('https://fonts.gstatic.com/s/airlockvendoredmono/v1/font.ttf')).toMatchObject({
      kind: 'fonts',
      size: machineFont().length,
      sha256: createHash('sha256').update(machineFont()).digest('hex'),
    });
    expect(byUrl(CDN_CSS_URL)?.kind).toBe('styles');
    expect(byUrl('https://cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme-colors.css')?.kind).toBe('styles');
    expect(byUrl('https://cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/img/dot.png')?.kind).toBe('styles');
    expect(byUrl(CDN_JS_URL)?.kind).toBe('scripts');
    expect(m.vendor.find((r) => r.site?.includes('css/site.css'))).toBeTruthy();
    // Trackers and consent managers are never vendored.
    expect(m.vendor.flatMap((r) => r.urls).filter((u) => u.includes('cookielaw'))).toEqual([]);
    for (const r of m.vendor) expect(r.path).toMatch(/^vendor\/[0-9a-f]{64}\.(css|ttf|png|js)$/);
  });

  it('import keeps the vendored files with the version and serve maps the pages to them, same origin, immutable, right type; CSP stays self-only', async () => {
    const d = await fresh();
    const store = join(d, 'store');
    const i = airlock(['import', vendored, '--store', store, '--trust', `${key}.pub`, '--activate', '--no-precompress']);
    expect(i.status, i.stderr).toBe(0);
    const srv = await startBin(['serve', '--store', store, '--port', '0', '--host', '127.0.0.1']);
    try {
      const page = (await get(srv.origin + '/')).body.toString();
      expect(page).not.toContain('fonts.googleapis.com');
      expect(page).not.toContain('cdn.jsdelivr.net');
      expect(page).not.toContain('integrity=');
      const hrefs = [...page.matchAll(/(?:href|src)="(\/_airlock\/vendor\/[^"]+)"/g)].map((x) => x[1]!);
      expect(hrefs.length).toBe(4); // font css, cdn css, site css copy, script
      for (const h of hrefs) {
        const r = await get(srv.origin + h);
        expect(r.status, h).toBe(200);
        expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
        expect(String(r.headers['content-security-policy'])).not.toMatch(/https?:/);
        expect(createHash('sha256').update(r.body).digest('hex')).toBe(/([0-9a-f]{64})/.exec(h)![1]);
      }
      const css = hrefs.find((h) => h.endsWith('.css'))!;
      expect((await get(srv.origin + css)).headers['content-type']).toBe('text/css; charset=utf-8');
      // The font stylesheet names the font by its copy, and the copy is the machine's font byte for byte.
      const fontCss = (await get(srv.origin + hrefs[0]!)).body.toString();
      const fontRef = /url\("([0-9a-f]{64}\.ttf)"\)/.exec(fontCss)![1]!;
      const font = await get(srv.origin + '/_airlock/vendor/' + fontRef);
      expect(font.headers['content-type']).toBe('font/ttf');
      expect(font.body.equals(machineFont())).toBe(true);
      expect((await get(srv.origin + '/_airlock/vendor/' + '0'.repeat(64) + '.ttf')).status).toBe(404);
      // Run-time loads: the map script is first in <head> and maps the carried URLs to the copies.
      expect(page).toMatch(/<head>[^]*?<script src="\/_airlock\/vendor-map\.js" data-airlock="vendor-map"><\/script>[^]*?<link /);
      const mapJs = await get(srv.origin + '/_airlock/vendor-map.js');
      expect(mapJs.status).toBe(200);
      expect(mapJs.headers['content-type']).toBe('text/javascript; charset=utf-8');
      expect(mapJs.body.toString()).toContain(`${JSON.stringify(CDN_JS_URL)}:"/_airlock/vendor/`);
      // Relative references resolve against the page's path: the page two folders deep gets the
      // site stylesheet's rewritten copy; the same bytes one folder deeper keep their own link.
      const siteCopy = hrefs[2]!;
      expect((await get(srv.origin + '/guide/deep/page.html')).body.toString()).toContain(`href="${siteCopy}"`);
      expect((await get(srv.origin + '/guide/deep/more/page.html')).body.toString()).toContain('href="../../css/site.css"');
    } finally {
      await srv.stop();
    }
  }, 60_000);

  it('without --vendor nothing changes: no vendor field, no members, pages keep their references', async () => {
    const d = await fresh();
    const p = await pack(join(d, 'out'), 'plain', []);
    expect(p.status, p.stderr).toBe(0);
    const pkg = (JSON.parse(p.stdout) as { package: string }).package;
    const ms = await membersOf(pkg);
    expect(ms.map((x) => x.name)).toEqual(['airlock.json', 'airlock.json.sig', 'bundle.tar.gz']);
    expect(JSON.parse(ms[0]!.data.toString())).not.toHaveProperty('vendor');
    const store = join(d, 'store');
    expect(airlock(['import', pkg, '--store', store, '--trust', `${key}.pub`, '--activate', '--no-precompress']).status).toBe(0);
    expect(await exists(join(store, 'versions', 'plain', 'vendor'))).toBe(false);
    const srv = await startBin(['serve', '--store', store, '--port', '0', '--host', '127.0.0.1']);
    try {
      const page = (await get(srv.origin + '/')).body.toString();
      expect(page).toContain(CDN_CSS_URL);
      expect(page).not.toContain('/_airlock/vendor/');
      expect(page).not.toContain('/_airlock/vendor-map.js');
      expect((await get(srv.origin + '/_airlock/vendor-map.js')).status).toBe(404);
    } finally {
      await srv.stop();
    }
  }, 60_000);

  it('pack --vendor --split: the volumes verify and import in place, vendored files included', async () => {
    const d = await fresh();
    const p = await pack(join(d, 'out'), 'vol', ['--vendor', 'fonts,styles', ...cdn.mirrors, '--split', '40K']);
    expect(p.status, p.stderr).toBe(0);
    const vols = (JSON.parse(p.stdout) as { volumes: { volumes: string[] } }).volumes.volumes;
    expect(vols.length).toBeGreaterThan(1);
    const v = airlock(['verify', vols[0]!, '--trust', `${key}.pub`]);
    expect(v.status, v.stderr).toBe(0);
    expect(v.stdout).toMatch(/6 vendored third-party files match too; read in place from \d+ volumes/);
    const store = join(d, 'store');
    const i = airlock(['import', vols[0]!, '--store', store, '--trust', `${key}.pub`, '--no-precompress']);
    expect(i.status, i.stderr).toBe(0);
    expect((await readdir(join(store, 'versions', 'vol', 'vendor'))).length).toBe(6);
  }, 60_000);

  it('--vendor-observe without Chromium: says so on stderr and in --json, and carries what the static scan finds', async () => {
    const d = await fresh();
    const none = join(d, 'no-chromium');
    const p = await pack(d, 'o1', ['--vendor', 'fonts', '--vendor-observe', '--vendor-chromium', none, ...cdn.mirrors]);
    expect(p.status, p.stderr).toBe(0);
    expect(p.stderr).toContain(`--vendor-observe: no Chromium at ${none}; carried only what the pages and stylesheets name statically`);
    const out = JSON.parse(p.stdout) as { vendorObserve: unknown; package: string };
    expect(out.vendorObserve).toEqual({ browser: false, reason: `no Chromium at ${none}` });
    const m = JSON.parse((await membersOf(out.package))[0]!.data.toString()) as { vendor: Array<{ urls: string[] }> };
    expect(m.vendor.flatMap((r) => r.urls)).toContain(FONT_CSS_URL);
    const u = airlock(['pack', archive, '--domain', 'docs.example.com', '--vendor-observe']);
    expect(u.status).toBe(2);
    expect(u.stderr).toContain('--vendor-observe needs --vendor');
  }, 60_000);

  it('--vendor fonts carries only the web fonts (no CDN stylesheet, no script)', async () => {
    const d = await fresh();
    const p = await pack(join(d, 'out'), 'fonts', ['--vendor', 'fonts', ...cdn.mirrors]);
    expect(p.status, p.stderr).toBe(0);
    const m = JSON.parse((await membersOf((JSON.parse(p.stdout) as { package: string }).package))[0]!.data.toString()) as { vendor: Array<{ kind: string }> };
    expect(new Set(m.vendor.map((r) => r.kind))).toEqual(new Set(['fonts']));
  }, 60_000);
});

describe('refusals', () => {
  async function refusedEverywhere(pkg: string, expectText: RegExp): Promise<void> {
    const d = await fresh();
    const store = join(d, 'store');
    // A store that already holds another version, so "unchanged" means something. That version
    // was packed after `pkg` (a higher sequence): --allow-downgrade waives the order rule only, so
    // the refusal is the vendored files' own.
    expect(airlock(['import', plainPkg, '--store', store, '--trust', `${key}.pub`, '--no-precompress']).status).toBe(0);
    const before = await treeDigest(store); // the store's own audit files aside (checked below)
    const outside = await readdir(d);
    const logged = await auditCount(store);
    const v = airlock(['verify', pkg, '--trust', `${key}.pub`]);
    expect(v.status, v.stderr).toBe(4);
    expect(v.stderr).toMatch(expectText);
    const i = airlock(['import', pkg, '--store', store, '--trust', `${key}.pub`, '--no-precompress', '--allow-downgrade']);
    expect(i.status, i.stderr).toBe(4);
    expect(i.stderr).toMatch(expectText);
    expect(await treeDigest(store), 'the store changed').toBe(before);
    expect(await readdir(d), 'something was written beside the store').toEqual(outside);
    await expectRefusalLogged(store, logged, /^AIRLOCK_/);
  }

  it('vendored file tampered in transit (a font swapped, manifest untouched): verify and import exit 4 naming the file; store unchanged', async () => {
    const d = await fresh();
    const bytes = Buffer.from(await readFile(vendored));
    const ms = await membersOf(vendored);
    const font = ms.find((x) => x.name.endsWith('.ttf'))!;
    const at = bytes.indexOf(font.data) + 1000;
    bytes[at] = bytes[at]! ^ 0x55;
    const p = join(d, 'tampered.airlock');
    await writeFile(p, bytes);
    await refusedEverywhere(p, new RegExp(`vendored file ${font.name.replace('.', '\\.')} .*AIRLOCK_VENDOR_DIGEST`));
  });

  it('the same version again: "unchanged" only when its vendored files verify; a tampered copy of a stored version is refused (exit 4), store unchanged', async () => {
    const d = await fresh();
    const store = join(d, 'store');
    expect(airlock(['import', vendored, '--store', store, '--trust', `${key}.pub`, '--no-precompress']).status).toBe(0);
    const again = airlock(['import', vendored, '--store', store, '--trust', `${key}.pub`, '--no-precompress', '--json']);
    expect(again.status, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ status: 'unchanged' });
    const bytes = Buffer.from(await readFile(vendored));
    const js = (await membersOf(vendored)).find((x) => x.name.endsWith('.js'))!;
    const at = bytes.indexOf(js.data);
    bytes[at] = bytes[at]! ^ 0x01;
    const p = join(d, 'tampered-again.airlock');
    await writeFile(p, bytes);
    const before = await treeDigest(store);
    const r = airlock(['import', p, '--store', store, '--trust', `${key}.pub`, '--no-precompress']);
    expect(r.status, r.stderr).toBe(4);
    expect(r.stderr).toMatch(new RegExp(`vendored file ${js.name.replace('.', '\\.')} .*AIRLOCK_VENDOR_DIGEST`));
    expect(await treeDigest(store)).toBe(before);
  });

  it('vendored member swapped for other bytes of the same size under a re-signed manifest that lies about nothing else: refused by digest', async () => {
    const d = await fresh();
    const p = await resigned(
      vendored,
      join(d, 'swap.airlock'),
      () => {},
      (rest) => rest.map((x) => (x.name.endsWith('.js') ? { name: x.name, data: Buffer.alloc(x.data.length, 0x20) } : x)),
    );
    await refusedEverywhere(p, /AIRLOCK_VENDOR_DIGEST/);
  });

  it('manifest lists a vendor path that escapes (vendor/../../etc/cron.d/x.css): refused by the schema before any byte is written', async () => {
    const d = await fresh();
    const p = await resigned(vendored, join(d, 'escape.airlock'), (m) => {
      const v = m.vendor as Array<{ path: string }>;
      v[0]!.path = 'vendor/../../etc/cron.d/x.css';
    });
    await refusedEverywhere(p, /vendor\.0\.path.*AIRLOCK_BAD_MANIFEST|AIRLOCK_BAD_MANIFEST/);
  });

  it('a vendored member the manifest does not list (smuggled after the bundle): refused', async () => {
    const d = await fresh();
    const p = await resigned(
      vendored,
      join(d, 'smuggled.airlock'),
      () => {},
      (rest) => [...rest, { name: `vendor/${'a'.repeat(64)}.js`, data: Buffer.from('alert(1)') }],
    );
    await refusedEverywhere(p, /does not list.*AIRLOCK_VENDOR_MEMBERS/);
  });

  it('huge vendor list (257 entries) and a 9 MiB vendored file: refused by the manifest bounds', async () => {
    const d = await fresh();
    const many = await resigned(vendored, join(d, 'many.airlock'), (m) => {
      const v = m.vendor as Array<Record<string, unknown>>;
      m.vendor = Array.from({ length: 257 }, (_, i) => ({ ...v[0], urls: [`https://cdn.example.net/${i}.css`] }));
    });
    await refusedEverywhere(many, /AIRLOCK_BAD_MANIFEST/);
    const huge = await resigned(vendored, join(d, 'huge.airlock'), (m) => {
      (m.vendor as Array<{ size: number }>)[0]!.size = 9 * 1024 * 1024;
    });
    await refusedEverywhere(huge, /AIRLOCK_BAD_MANIFEST/);
  });

  it('a CDN that redirects to plain http (a downgrade) without a mirror mapping: pack exits 1 naming the URL and writes nothing', async () => {
    const d = await fresh();
    const path = '/cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.css';
    cdn.routes.set(path, (res) => {
      res.writeHead(302, { location: 'http://cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.css', 'content-length': 0 });
      res.end();
    });
    try {
      const p = await pack(join(d, 'out'), 'down', ['--vendor', 'styles', ...cdn.mirrors]);
      expect(p.status, p.stderr).toBe(1);
      expect(p.stderr).toMatch(/cannot vendor https:\/\/cdn\.jsdelivr\.net\/.*not https.*AIRLOCK_VENDOR_INSECURE/);
      expect(await exists(join(d, 'out', 'docs.example.com-down.airlock'))).toBe(false);
    } finally {
      cdn.routes.delete(path);
    }
  }, 60_000);

  it('a CDN answering a 9 MiB "stylesheet": pack exits 1 (AIRLOCK_VENDOR_LIMIT) and writes nothing', async () => {
    const d = await fresh();
    const path = '/cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.css';
    cdn.routes.set(path, (res) => {
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end(Buffer.alloc(9 * 1024 * 1024, 0x20));
    });
    try {
      const p = await pack(join(d, 'out'), 'big', ['--vendor', 'styles', ...cdn.mirrors]);
      expect(p.status, p.stderr).toBe(1);
      expect(p.stderr).toMatch(/AIRLOCK_VENDOR_LIMIT/);
      expect(await exists(join(d, 'out', 'docs.example.com-big.airlock'))).toBe(false);
    } finally {
      cdn.routes.delete(path);
    }
  }, 60_000);

  it('a CDN stylesheet naming 300 distinct images (a file-count bomb): pack stops at 256 files (AIRLOCK_VENDOR_LIMIT) and writes nothing', async () => {
    const d = await fresh();
    const path = '/cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.css';
    const css = Array.from({ length: 300 }, (_, i) => `.i${i}{background:url(https://cdn.jsdelivr.net/many/${i}.png)}`).join('\n');
    cdn.routes.set(path, (res) => {
      res.writeHead(200, { 'content-type': 'text/css' });
      res.end(css);
    });
    const before = cdn.requests.length;
    try {
      const p = await pack(join(d, 'out'), 'many', ['--vendor', 'styles', ...cdn.mirrors]);
      expect(p.status, p.stderr).toBe(1);
      expect(p.stderr).toMatch(/more than 256 files to vendor.*AIRLOCK_VENDOR_LIMIT/);
      expect(await exists(join(d, 'out', 'docs.example.com-many.airlock'))).toBe(false);
      expect(cdn.requests.length - before, 'downloads stop at the limit').toBeLessThanOrEqual(260);
    } finally {
      cdn.routes.delete(path);
    }
  }, 60_000);

  it('--vendor with an unknown kind, or a mirror that is not an https origin: usage (exit 2)', async () => {
    expect((await pack(join(dir, 'u'), 'u1', ['--vendor', 'fonts,images'])).status).toBe(2);
    expect((await pack(join(dir, 'u'), 'u2', ['--vendor', 'fonts', '--vendor-mirror', 'http://fonts.googleapis.com=http://127.0.0.1:1'])).status).toBe(2);
    expect((await pack(join(dir, 'u'), 'u3', ['--vendor-mirror', 'https://fonts.googleapis.com=http://127.0.0.1:1'])).status).toBe(2);
  });
});

describe('fetch --vendor (the same code path after the download)', () => {
  it('fetch from the service emulator carries the vendored files; a vendoring failure writes nothing and the re-run does not download the bundle again', async () => {
    const r = await rig({ sites: { 'docs.example.com': { dir: join(dir, 'site'), format: 'tar.gz' } } });
    try {
      const env = { AIRLOCK_API_URL: r.emu.url, AIRLOCK_ADMIN_KEY: r.emu.keys.admin };
      const args = [
        'fetch',
        '--domain',
        'docs.example.com',
        '--out',
        r.out,
        '--version-label',
        'f1',
        '--sign-key',
        `${key}.key`,
        '--vendor',
        'fonts,styles',
        ...cdn.mirrors,
        '--json',
      ];
      const font = '/fonts.gstatic.com/s/airlockvendoredmono/v1/font.ttf';
      cdn.routes.set(font, (res) => {
        res.writeHead(503, { 'content-length': 0 });
        res.end();
      });
      const failed = await airlockAsync(args, { env, timeoutMs: 60_000 });
      cdn.routes.delete(font);
      expect(failed.status, failed.stderr).toBe(1);
      expect(failed.stderr).toMatch(/cannot vendor https:\/\/fonts\.gstatic\.com\/s\/airlockvendoredmono\/v1\/font\.ttf: HTTP 503/);
      expect(await exists(join(r.out, 'docs.example.com-f1.airlock'))).toBe(false);
      const partPath = join(r.out, '.docs.example.com.bundle.part');
      expect(await exists(partPath), 'the verified download is kept for the re-run').toBe(true);
      const bundleGets = r.emu.state.objectRequests.length;
      const partSize0 = (await stat(partPath)).size;
      const ok = await airlockAsync(args, { env, timeoutMs: 60_000 });
      expect(ok.status, ok.stderr).toBe(0);
      const summary = JSON.parse(ok.stdout) as { package: string; vendored: number };
      expect(summary.vendored).toBe(6); // font css, font, cdn css, its import, its image, the site css copy
      // The re-run resumes the kept part at its end: a range request from the last byte on, nothing downloaded again.
      const partSize = partSize0;
      expect(
        r.emu.state.objectRequests.slice(bundleGets).map((q) => q.headers.range),
        'the verified download was kept, not fetched again',
      ).toEqual([`bytes=${partSize}-`]);
      expect(await exists(join(r.out, '.docs.example.com.bundle.part'))).toBe(false);
      const v = airlock(['verify', summary.package, '--trust', `${key}.pub`]);
      expect(v.status, v.stderr).toBe(0);
    } finally {
      await r.close();
    }
  }, 120_000);
});
