/**
 * Every documented chart example starts. Each `helm install` / `helm upgrade` command of
 * docs/kubernetes.md and of the chart's values.yaml comments is rendered by a real helm
 * (test/helpers/helm.ts); then the serving pod is played out on this machine: its volumes laid
 * out as the kubelet lays them out (emptyDirs mode 0777 owned by the fsGroup, a Secret or ConfigMap
 * volume as a read-only folder of `..data` symlinks), its container's arguments run by the built
 * binary as the pod's runAsUser/runAsGroup, until `/_airlock/ready` answers 200.
 * What differs from the cluster, and only that: the mount paths live under a temp folder, the
 * bundle URL's origin is a bundle server on 127.0.0.1 (same path) serving a signed package (or,
 * for a raw export archive, the archive), and the values file's host/port are 127.0.0.1 and a
 * free port (tests never bind other addresses).
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { createServer, type Server } from 'node:http';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { createReadStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { extractHelm, type Helm } from '../helpers/helm.js';
import { startAirlock } from '../helpers/bin.js';
import { until } from '../helpers/wait.js';
import { makePackage } from '../helpers/make-package.js';
import { generateKeyPair } from '../../src/package/index.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHART_PATH = 'deploy/helm/airlock';
let helm: Helm;
let work: string;
let pubPem: string;
let keyPath: string;
let bundles: Server;
let origin: string;
const made = new Map<string, Promise<string>>();

/** The bundle server's file for a URL path: a signed package named <domain>-<version>.airlock, or a raw export archive. */
function bundleFor(path: string): Promise<string> | null {
  const pkg = /\/([a-z0-9.-]*\.[a-z]+)-([A-Za-z0-9._-]+)\.airlock$/.exec(path);
  const raw = /\.(tar\.gz|tgz)$/.test(path);
  if (!pkg && !raw) return null;
  const key = pkg ? `${pkg[1]}/${pkg[2]}` : 'raw';
  if (!made.has(key)) {
    made.set(
      key,
      makePackage({ outDir: join(work, 'bundles', key.replace('/', '_')), domain: pkg?.[1], version: pkg?.[2] ?? 'raw', signKey: keyPath }).then((p) =>
        pkg ? p.pkgPath : p.archivePath,
      ),
    );
  }
  return made.get(key)!;
}

beforeAll(async () => {
  helm = await extractHelm();
  work = await mkdtemp(join(tmpdir(), 'airlock-chart-start-'));
  await chmod(work, 0o755);
  ({ keyPath } = await generateKeyPair(join(work, 'release')));
  pubPem = await readFile(join(work, 'release.pub'), 'utf8');
  bundles = createServer((req, res) => {
    const file = bundleFor(new URL(req.url!, 'http://x').pathname);
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    void file.then((f) => {
      res.writeHead(200, { 'content-type': 'application/octet-stream' });
      createReadStream(f).pipe(res);
    });
  });
  await new Promise<void>((r) => bundles.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(bundles.address() as { port: number }).port}`;
}, 60_000);
afterAll(async () => {
  await new Promise((r) => bundles?.close(r));
  await helm?.remove();
  await rm(work, { recursive: true, force: true });
});

/** `helm install|upgrade` commands in a text: continuation lines joined, comment markers of values.yaml stripped. */
function helmCommands(text: string): string[] {
  const lines = text.split('\n').map((l) => l.replace(/^#\s?/, ''));
  return lines
    .join('\n')
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^helm (install|upgrade) /.test(l));
}

/** The --set pairs of a documented command (anything else this test does not know is a failure, not a silent skip). */
function setsOf(cmd: string): string[] {
  const words = cmd.replace(/\s+#.*$/, '').split(/\s+/);
  expect(words.slice(3, 4), cmd).toEqual([CHART_PATH]);
  const sets: string[] = [];
  for (let i = 4; i < words.length; i++) {
    expect(words[i], `${cmd}: only --set is understood here`).toBe('--set');
    sets.push(words[++i]!.replace(/^(staticExport|library\.sites\[\d+\])\.bundleUrl=https?:\/\/[^/]+/, (_m, key: string) => `${key}.bundleUrl=${origin}`));
  }
  return sets;
}

interface Obj {
  kind: string;
  metadata: { name: string };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  spec?: any;
}

/** A Secret/ConfigMap volume as the kubelet writes it: files behind a `..data` symlink, read-only. */
async function projected(dir: string, files: Record<string, string>): Promise<void> {
  const ts = join(dir, '..2026_01_01_00_00_00.000000001');
  await mkdir(ts, { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(join(ts, name), text);
  await symlink('..2026_01_01_00_00_00.000000001', join(dir, '..data'));
  for (const name of Object.keys(files)) await symlink(join('..data', name), join(dir, name));
  await chmod(ts, 0o555);
  await chmod(dir, 0o555);
}

async function startPod(cmd: string, n: number): Promise<void> {
  const r = helm.run(['template', 'docs', join(ROOT, CHART_PATH), '--namespace', 'docs', ...setsOf(cmd).flatMap((s) => ['--set', s])]);
  expect(r.status, `${cmd}\n${r.stderr}`).toBe(0);
  const objects = parseAllDocuments(r.stdout)
    .map((d) => d.toJS() as Obj)
    .filter(Boolean);
  const dep = objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'docs-airlock')!;
  const values = objects.find((o) => o.kind === 'Secret' && o.metadata.name === 'docs-airlock');
  const pod = dep.spec.template.spec;
  const c = pod.containers[0];
  const root = join(work, `pod${n}`);
  await mkdir(root, { mode: 0o755 });
  // Port 0, and the address the server prints: a port chosen here and freed again could be
  // taken by another test's server before the pod binds it (it then answered for the pod).
  const uid: number | undefined = process.getuid?.() === 0 ? pod.securityContext.runAsUser : undefined;
  const gid: number | undefined = uid === undefined ? undefined : pod.securityContext.runAsGroup;
  const fsGroup: number | undefined = uid === undefined ? undefined : pod.securityContext.fsGroup;
  const mounts: Array<{ name: string; mountPath: string }> = c.volumeMounts;
  // One pass over every mount path, longest first (the temp root itself starts with /tmp).
  const paths = new RegExp(
    `(^|[\\s"'])(${mounts
      .map((m) => m.mountPath)
      .sort((a, b) => b.length - a.length)
      .join('|')})(?=/|$|[\\s"'])`,
    'gm',
  );
  const relocate = (s: string) => s.replace(paths, (_m, pre: string, p: string) => `${pre}${root}${p}`);
  // Mount points in path order, as the runtime mounts them (a parent volume first).
  for (const m of [...mounts].sort((a, b) => a.mountPath.length - b.mountPath.length)) {
    const dir = root + m.mountPath;
    await mkdir(dirname(dir), { recursive: true, mode: 0o755 });
    const vol = pod.volumes.find((v: { name: string }) => v.name === m.name);
    if (vol.emptyDir) {
      await mkdir(dir, { mode: 0o777 });
      await chmod(dir, 0o777);
      if (fsGroup !== undefined) await chown(dir, 0, fsGroup);
    } else if (vol.configMap || vol.secret?.secretName === values?.metadata.name) {
      // The values file (a Secret: a bundle URL may be presigned), or the trust keys of trust.keys.
      const cm = vol.configMap ? objects.find((o) => o.kind === 'ConfigMap' && o.metadata.name === vol.configMap.name) : values;
      const data: Record<string, string> = cm ? { ...(cm.data ?? cm.stringData)! } : { 'release.pub': pubPem }; // an existing ConfigMap: the documented keys
      if (data['values.yaml']) {
        data['values.yaml'] = relocate(data['values.yaml'])
          .replace(/^host: .*$/m, 'host: "127.0.0.1"')
          .replace(/^port: .*$/m, 'port: 0');
      }
      await projected(dir, data);
    } else if (vol.secret) {
      // The Secrets the documentation creates: the trust keys, and the model server's key (key "key").
      const documented: Record<string, Record<string, string>> = { 'release-keys': { 'release.pub': pubPem }, 'model-key': { key: 'sk-in-network-doc' } };
      expect(Object.keys(documented), `${cmd}: a Secret the documentation does not create`).toContain(vol.secret.secretName);
      await projected(dir, documented[vol.secret.secretName]!);
    } else {
      throw new Error(`${cmd}: volume ${m.name} of a kind this test does not lay out`);
    }
  }
  const env = Object.fromEntries((c.env as Array<{ name: string; value: string }>).map((e) => [e.name, relocate(e.value)]));
  const args = (c.args as string[]).map(relocate);
  const child = startAirlock(args, {
    cwd: '/',
    uid,
    gid,
    bareEnv: true,
    env: { NODE_ENV: 'production', TMPDIR: `${root}/tmp`, HOME: `${root}/data`, ...env, AIRLOCK_PORT: '0' },
  });
  const err = () => child.stderr();
  try {
    let status = 0;
    let origin: string | undefined;
    // Ready (200), or gone, or 30 s passed: whichever comes first.
    await until(
      async () => {
        origin ??= /serving (?:the library )?\S+ at (http:\/\/127\.0\.0\.1:\d+)\//.exec(err())?.[1];
        status =
          origin === undefined
            ? 0
            : await fetch(`${origin}/_airlock/ready`).then(
                (x) => x.status,
                () => 0,
              );
        return status === 200 || child.done();
      },
      { timeoutMs: 30_000, intervalMs: 100 },
    ).catch(() => undefined);
    expect(status, `${cmd}\n${err()}`).toBe(200);
    const page = await fetch(`${origin!}/`);
    expect(page.status).toBe(200);
    // One site's release: local-assistant on exactly when the command gives a model, its key file read at
    // start (the model server itself is asked only when a reader asks).
    if (!cmd.includes('library.sites')) {
      const features = (await (await fetch(`${origin!}/_airlock/features`)).json()) as { features: Record<string, boolean> };
      expect(features.features.localAssistant, `${cmd}\n${err()}`).toBe(cmd.includes('localAssistant.model.url='));
    }
    const pinned = /staticExport\.version=(\S+)/.exec(cmd)?.[1];
    if (pinned) expect(page.headers.get('x-airlock-version')).toBe(pinned);
    // A library: every site it lists is served (under /<domain>/), its pin kept.
    for (const [, n, domain] of cmd.matchAll(/library\.sites\[(\d+)\]\.domain=(\S+)/g)) {
      const home = await fetch(`${origin!}/${domain}/`);
      expect(home.status, `${domain}\n${err()}`).toBe(200);
      const pin = new RegExp(`library\\.sites\\[${n}\\]\\.version=(\\S+)`).exec(cmd)?.[1];
      if (pin) expect(home.headers.get('x-airlock-version')).toBe(pin);
    }
  } finally {
    child.kill('SIGTERM');
  }
  expect((await child.exit()).code, err()).toBe(0);
}

const docs = helmCommands(await readFile(join(ROOT, 'docs/kubernetes.md'), 'utf8'));
const valuesComments = helmCommands(
  (await readFile(join(ROOT, CHART_PATH, 'values.yaml'), 'utf8'))
    .split('\n')
    .filter((l) => l.startsWith('#'))
    .join('\n'),
);

describe('documented chart examples start', () => {
  it("the examples are found (the guide's install, raw-archive and upgrade commands; the two in values.yaml)", () => {
    expect(docs.length).toBeGreaterThanOrEqual(3);
    expect(docs.some((c) => c.startsWith('helm upgrade'))).toBe(true);
    expect(valuesComments.length).toBe(2);
  });

  it.each(
    [...docs.map((c) => ['docs/kubernetes.md', c] as const), ...valuesComments.map((c) => ['values.yaml', c] as const)].map(([w, c], i) => [w, c, i] as const),
  )(
    '%s: %s — the pod it renders starts and is ready',
    async (_where, cmd, i) => {
      await startPod(cmd, i);
    },
    60_000,
  );
});
