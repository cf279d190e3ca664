/**
 * "The internet" for --vendor tests, on 127.0.0.1: one HTTP server standing in for the font
 * service and a CDN, reached through `--vendor-mirror https://HOST=http://127.0.0.1:PORT/HOST`.
 * The stylesheets are synthetic; the font is a real font file of this machine, read at test time
 * (Liberation, which Debian's Chromium pulls in): nothing third-party is committed.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type Server, type ServerResponse } from 'node:http';

export const FONT_CANDIDATES = [
  '/usr/share/fonts/truetype/liberation/LiberationMono-Bold.ttf',
  '/usr/share/fonts/truetype/liberation2/LiberationMono-Bold.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf',
];

export function machineFont(): Buffer {
  const f = FONT_CANDIDATES.find((p) => existsSync(p));
  if (!f) throw new Error(`no font file on this machine (looked for ${FONT_CANDIDATES.join(', ')}): apt-get install -y fonts-liberation`);
  return readFileSync(f);
}

/** The family the synthetic web-font stylesheet declares: installed nowhere, so only the web font renders it. */
export const WEB_FONT_FAMILY = 'Airlock Vendored Mono';
export const FONT_CSS_URL = 'https://fonts.googleapis.com/css2?family=Airlock+Vendored+Mono&display=swap';
export const CDN_CSS_URL = 'https://cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.css';
export const CDN_JS_URL = 'https://cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.js';
export const HOSTS = ['fonts.googleapis.com', 'fonts.gstatic.com', 'cdn.jsdelivr.net'] as const;

export function fontCss(): string {
  return `/* synthetic */\n@font-face {\n  font-family: '${WEB_FONT_FAMILY}';\n  font-style: normal;\n  font-weight: 400;\n  src: url(https://fonts.gstatic.com/s/airlockvendoredmono/v1/font.ttf) format('truetype');\n}\n`;
}
export function cdnCss(): string {
  return `@import url("theme-colors.css");\n.airlock-banner{background:url(../img/dot.png) repeat;padding:24px;border:6px solid #0d9373}\n`;
}
export const COLORS_CSS = '.airlock-banner{color:#fff;background-color:#7a1fa2}\nh1{letter-spacing:0.2em;text-transform:uppercase}\n';
/** A 1×1 PNG (written out here: it is ours). */
export const DOT_PNG = Buffer.from(
  '89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c63f8cf60f01f0005000201e5274fc00000000049454e44ae426082',
  'hex',
);

export interface FakeCdn {
  port: number;
  requests: string[];
  /** `--vendor-mirror` arguments for every host. */
  mirrors: string[];
  /** Override one path's answer (a test of tampering, limits, redirects). */
  routes: Map<string, (res: ServerResponse) => void>;
  close(): Promise<void>;
}

export async function startFakeCdn(): Promise<FakeCdn> {
  const font = machineFont();
  const requests: string[] = [];
  const routes = new Map<string, (res: ServerResponse) => void>();
  const send = (res: ServerResponse, type: string, body: string | Buffer) => {
    res.writeHead(200, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
    res.end(body);
  };
  let port = 0;
  const server: Server = createServer((req, res) => {
    const url = req.url ?? '/';
    requests.push(url);
    const own = routes.get(url);
    if (own) return own(res);
    if (url.startsWith('/fonts.googleapis.com/css2?')) return send(res, 'text/css; charset=utf-8', fontCss());
    // The reference: the page as it renders online, every third-party URL reachable here.
    if (url === '/ref/' || url === '/css/site.css') {
      const local = (t: string) =>
        t.replace(/https:\/\/(fonts\.googleapis\.com|fonts\.gstatic\.com|cdn\.jsdelivr\.net)\//g, `http://127.0.0.1:${port}/ref/$1/`);
      return url === '/ref/'
        ? send(res, 'text/html; charset=utf-8', local(vendorSite({ script: false })['index.html']!))
        : send(res, 'text/css', local(vendorSite()['css/site.css']!));
    }
    if (url.startsWith('/ref/fonts.googleapis.com/css2?'))
      return send(res, 'text/css; charset=utf-8', fontCss().replace('https://fonts.gstatic.com/', `http://127.0.0.1:${port}/fonts.gstatic.com/`));
    if (url.startsWith('/ref/cdn.jsdelivr.net/') || url.startsWith('/ref/fonts.gstatic.com/')) {
      res.writeHead(308, { location: url.slice(4), 'content-length': 0 });
      return res.end();
    }
    if (url === '/fonts.gstatic.com/s/airlockvendoredmono/v1/font.ttf') return send(res, 'font/ttf', font);
    if (url === '/cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.css') return send(res, 'text/css', cdnCss());
    if (url === '/cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme-colors.css') return send(res, 'text/css', COLORS_CSS);
    if (url === '/cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/img/dot.png') return send(res, 'image/png', DOT_PNG);
    if (url === '/cdn.jsdelivr.net/npm/airlock-test-theme@1.0.0/dist/theme.min.js')
      return send(res, 'text/javascript', 'document.documentElement.dataset.theme="vendored";\n');
    const many = /^\/cdn\.jsdelivr\.net\/many\/(\d{1,4})\.png$/.exec(url);
    if (many) return send(res, 'image/png', Buffer.concat([DOT_PNG, Buffer.from(many[1]!)])); // distinct bytes each
    res.writeHead(404, { 'content-length': 0 });
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as { port: number }).port;
  return {
    port,
    requests,
    routes,
    mirrors: HOSTS.flatMap((h) => ['--vendor-mirror', `https://${h}=http://127.0.0.1:${port}/${h}`]),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A small export that uses the font service, the CDN stylesheet and script, and a consent banner. */
export function vendorSite(o: { script?: boolean } = {}): Record<string, string> {
  const page = (title: string) => `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>${title}</title>
<link rel="preconnect" href="https://fonts.gstatic.com" crossorigin>
<link rel="stylesheet" href="${FONT_CSS_URL.replace(/&/g, '&amp;')}">
<link rel="stylesheet" href="${CDN_CSS_URL}" integrity="sha384-${createHash('sha384').update(cdnCss()).digest('base64')}" crossorigin="anonymous">
<link rel="stylesheet" href="/css/site.css">
${o.script === false ? '' : `<script src="${CDN_JS_URL}" defer></script>`}
<script src="https://cdn.cookielaw.org/scripttemplates/otSDKStub.js" type="text/javascript" charset="UTF-8" data-domain-script="0190a3c4-7e21-7c4b-9d53-5f2a6b8c1d0e"></script>
<script type="text/javascript">
function OptanonWrapper() { }
</script>
</head><body>
<main id="shot" style="display:inline-block;width:640px">
<h1>Vendored page</h1>
<div class="airlock-banner">Banner from the CDN stylesheet</div>
<pre class="mono">The quick brown fox 0123456789 {}[]</pre>
</main>
</body></html>
`;
  return {
    'index.html': page('Home'),
    'guide/index.html': page('Guide'),
    'css/site.css': `@import url("https://fonts.googleapis.com/css2?family=Airlock+Vendored+Mono&display=swap");\nbody{margin:16px;font-family:serif}\n.mono{font-family:'${WEB_FONT_FAMILY}',monospace;font-size:28px}\n`,
  };
}
