/**
 * deploy/helm/airlock, rendered offline by a real helm (test/helpers/helm.ts) and every rendered
 * object validated against the Kubernetes OpenAPI schemas (kubernetes-models; the ServiceMonitor
 * against the prometheus-operator CRD schema). The values file the chart renders for airlock is
 * read by airlock's own values loader: the chart and `serve --values` cannot drift apart.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as apps from 'kubernetes-models/apps/v1';
import { extractHelm, type Helm } from '../helpers/helm.js';
import { CHART, findObject, renderChart, validateAll } from '../helpers/chart.js';
import { loadValues } from '../../src/values/index.js';
import { libraryConfig } from '../../src/start/library-config.js';

let helm: Helm;
let work: string;

beforeAll(async () => {
  helm = await extractHelm();
  work = await mkdtemp(join(tmpdir(), 'airlock-chart-'));
}, 60_000);
afterAll(async () => {
  await helm?.remove();
  await rm(work, { recursive: true, force: true });
});

const renderWith = (values: Record<string, unknown>) => renderChart(helm, work, values);

const PEM = '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n';
const find = findObject;

describe('helm chart deploy/helm/airlock', () => {
  it('lints clean (helm lint --strict)', () => {
    const r = helm.run([
      'lint',
      CHART,
      '--strict',
      '--set',
      'staticExport.bundleUrl=https://bucket.example/docs.airlock',
      '--set',
      'trust.existingSecret=release-keys',
    ]);
    expect(r.status, r.stdout + r.stderr).toBe(0);
    expect(r.stdout).toContain('0 chart(s) failed');
  });

  it('default values: Deployment, Service, PDB and the values Secret validate; probes, non-root, read-only root, resources', async () => {
    const { status, objects, stderr } = await renderWith({
      staticExport: { bundleUrl: 'https://bucket.example/export.tar.gz', version: 'v7', allowUnsigned: true },
    });
    expect(status, stderr).toBe(0);
    validateAll(objects);
    expect(objects.map((o) => o.kind).sort()).toEqual(['Deployment', 'PodDisruptionBudget', 'Secret', 'Service']);
    const dep = new apps.Deployment(find(objects, 'Deployment', 'docs-airlock') as never);
    expect(dep.spec!.replicas).toBe(3);
    const pod = dep.spec!.template.spec!;
    const c = pod.containers[0]!;
    expect(c.readinessProbe!.httpGet!.path).toBe('/_airlock/ready');
    expect(c.livenessProbe!.httpGet!.path).toBe('/_airlock/health');
    expect(pod.securityContext!.runAsNonRoot).toBe(true);
    expect(pod.securityContext!.runAsUser).toBeGreaterThan(0);
    expect(c.securityContext!.readOnlyRootFilesystem).toBe(true);
    expect(c.securityContext!.allowPrivilegeEscalation).toBe(false);
    expect(c.resources!.requests!.memory).toBeDefined();
    expect(c.args).toEqual(['serve', '--values', '/etc/airlock/values.yaml', '--metrics']);
    const mounts = c.volumeMounts!.map((m) => m.mountPath);
    expect(mounts).toEqual(expect.arrayContaining(['/data/store', '/tmp', '/etc/airlock']));
    const pdb = find(objects, 'PodDisruptionBudget', 'docs-airlock')!;
    expect(pdb.spec!.maxUnavailable).toBe(1);
    // The Service selects the serving pods only (never the mirror's).
    expect((find(objects, 'Service', 'docs-airlock')!.spec!.selector as Record<string, string>)['app.kubernetes.io/component']).toBe('server');
  });

  it('a presigned bundle link (a credential until it expires) is rendered into a Secret only, for one site and for a library', async () => {
    const signed = 'https://bucket.example/export.tar.gz?X-Amz-Credential=AKIA&X-Amz-Signature=0123abcd';
    for (const values of [
      { staticExport: { bundleUrl: signed, allowUnsigned: true, domain: 'docs.example.com' } },
      { library: { sites: [{ domain: 'docs.example.com', bundleUrl: signed, allowUnsigned: true }] } },
    ]) {
      const { status, objects, stderr } = await renderWith(values);
      expect(status, stderr).toBe(0);
      const holding = objects.filter((o) => JSON.stringify(o).includes('X-Amz-Signature')).map((o) => `${o.kind}/${o.metadata.name}`);
      expect(holding).toEqual(['Secret/docs-airlock']);
    }
  });

  it('the values file the chart renders is what airlock serve --values reads, with no unknown key', async () => {
    const { objects } = await renderWith({
      staticExport: { bundleUrl: 'https://bucket.example/export.tar.gz', version: 'v7', domain: 'docs.example.com', allowUnsigned: true },
      deployment: { type: 'client-hosted' },
      features: { search: true, analytics: false },
    });
    const file = join(work, 'rendered-values.yaml');
    await writeFile(file, find(objects, 'Secret', 'docs-airlock')!.stringData!['values.yaml']!);
    const loaded = await loadValues(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.values).toMatchObject({
      staticExport: { enabled: true, bundleUrl: 'https://bucket.example/export.tar.gz', version: 'v7', domain: 'docs.example.com' },
      deployment: { type: 'client-hosted' },
      features: { search: true, analytics: false },
      store: '/data/store',
      port: 8080,
      host: '0.0.0.0',
    });
  });

  it("staticExport.download bounds are accepted by the chart's schema and reach the values file airlock reads", async () => {
    const download = { headersTimeoutSeconds: 0.5, minBytesPerSecond: 4096, rateWindowSeconds: 10, timeoutSeconds: 7200, maxBytes: 8_000_000_000 };
    const { status, objects, stderr } = await renderWith({
      staticExport: { bundleUrl: 'https://bucket.example/export.tar.gz', allowUnsigned: true, download },
    });
    expect(status, stderr).toBe(0);
    const file = join(work, 'rendered-download-values.yaml');
    await writeFile(file, find(objects, 'Secret', 'docs-airlock')!.stringData!['values.yaml']!);
    const loaded = await loadValues(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.values.staticExport?.download).toEqual(download);
  });

  it('every option on: mirror Deployment + PVC + Service, ServiceMonitor, trust keys mounted from a Secret; all validate', async () => {
    const { status, objects, stderr } = await renderWith({
      staticExport: { bundleUrl: 'https://bucket.example/docs-2026-05-01.airlock' },
      mirror: { enabled: true, tokensSecret: 'mirror-tokens', secretSecret: 'mirror-secret', publicUrl: 'http://mirror.internal' },
      metrics: { serviceMonitor: { enabled: true, labels: { release: 'prom' } } },
      trust: { existingSecret: 'release-keys' },
      replicaCount: 5,
    });
    expect(status, stderr).toBe(0);
    validateAll(objects);
    const kinds = objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
    expect(kinds).toEqual(
      expect.arrayContaining([
        'Deployment/docs-airlock-mirror',
        'PersistentVolumeClaim/docs-airlock-mirror',
        'Service/docs-airlock-mirror',
        'ServiceMonitor/docs-airlock',
        'ConfigMap/docs-airlock-mirror',
      ]),
    );
    const sm = find(objects, 'ServiceMonitor', 'docs-airlock')!;
    expect((sm.spec!.endpoints as Array<{ path: string }>)[0]!.path).toBe('/_airlock/metrics');
    const dep = new apps.Deployment(find(objects, 'Deployment', 'docs-airlock') as never);
    expect(dep.spec!.template.spec!.volumes!.find((v) => v.name === 'trust')!.secret!.secretName).toBe('release-keys');
    // The mirror's values file is airlock's too.
    const file = join(work, 'mirror-values.yaml');
    await writeFile(file, find(objects, 'ConfigMap', 'docs-airlock-mirror')!.data!['values.yaml']!);
    const loaded = await loadValues(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.values.mirror).toMatchObject({
      enabled: true,
      tokensFile: '/etc/airlock-mirror/tokens/tokens',
      secretFile: '/etc/airlock-mirror/secret/secret',
    });
  });

  it("a fleet: replicas follow this release's mirror with a token from a Secret, over HTTPS from a TLS Secret; airlock reads the values it renders", async () => {
    const { status, objects, stderr } = await renderWith({
      mirror: { enabled: true, tokensSecret: 'mirror-tokens' },
      follow: { enabled: true, tokenSecret: 'follow-token', pollSeconds: 1.5 },
      skewGraceSeconds: 120,
      tls: { secretName: 'docs-tls' },
      trust: { existingSecret: 'release-keys' },
    });
    expect(status, stderr).toBe(0);
    validateAll(objects);
    const dep = new apps.Deployment(find(objects, 'Deployment', 'docs-airlock') as never);
    const pod = dep.spec!.template.spec!;
    const c = pod.containers[0]!;
    expect(c.args).toEqual([
      'serve',
      '--values',
      '/etc/airlock/values.yaml',
      '--metrics',
      '--tls-cert',
      '/etc/airlock-tls/tls.crt',
      '--tls-key',
      '/etc/airlock-tls/tls.key',
    ]);
    for (const probe of [c.readinessProbe!, c.livenessProbe!, c.startupProbe!]) expect(probe.httpGet!.scheme).toBe('HTTPS');
    expect(pod.volumes!.find((v) => v.name === 'tls')!.secret!.secretName).toBe('docs-tls');
    expect(pod.volumes!.find((v) => v.name === 'follow-token')!.secret).toMatchObject({ secretName: 'follow-token', items: [{ key: 'token', path: 'token' }] });
    expect(c.volumeMounts!.find((m) => m.name === 'follow-token')!.mountPath).toBe('/etc/airlock-follow');
    const file = join(work, 'follow-values.yaml');
    await writeFile(file, find(objects, 'Secret', 'docs-airlock')!.stringData!['values.yaml']!);
    const loaded = await loadValues(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.values).toMatchObject({
      skewGraceSeconds: 120,
      follow: { url: 'http://docs-airlock-mirror.docs.svc', tokenFile: '/etc/airlock-follow/token', pollSeconds: 1.5, allowUnsigned: false },
    });
  });

  it("follow.enabled with neither follow.url nor the release's mirror fails to render, naming both", async () => {
    const r = await renderWith({ follow: { enabled: true, tokenSecret: 't' } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/follow\.url.*mirror\.enabled/);
    const ok = await renderWith({ follow: { enabled: true, tokenSecret: 't', url: 'http://mirror.internal:8080' }, trust: { existingSecret: 'release-keys' } });
    expect(ok.status, ok.stderr).toBe(0);
    expect(find(ok.objects, 'Secret', 'docs-airlock')!.stringData!['values.yaml']).toContain('url: "http://mirror.internal:8080"');
  });

  it("inline trust keys become a ConfigMap mounted as the store's trusted-keys/", async () => {
    const { status, objects, stderr } = await renderWith({
      staticExport: { bundleUrl: 'https://bucket.example/docs.airlock' },
      trust: { keys: { 'release.pub': '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n' } },
    });
    expect(status, stderr).toBe(0);
    validateAll(objects);
    expect(find(objects, 'ConfigMap', 'docs-airlock-trust')!.data!['release.pub']).toContain('BEGIN PUBLIC KEY');
  });

  it("without a bundle to serve the render fails with what to set (each replica's store starts empty: no crash-looping pods)", async () => {
    for (const values of [{}, { staticExport: { enabled: false }, trust: { existingSecret: 'k' } }, { trust: { existingSecret: 'k' } }]) {
      const r = await renderWith(values);
      expect(r.status, JSON.stringify(values)).not.toBe(0);
      expect(r.stderr).toMatch(/staticExport\.bundleUrl is required/);
      expect(r.stderr).toContain('follow.enabled');
    }
  });

  it('a raw export archive needs staticExport.allowUnsigned spelled out (airlock refuses it unsigned), query strings of presigned links included', async () => {
    for (const url of [
      'https://bucket.example/export.tar.gz',
      'https://bucket.example/a/export.TGZ?X-Amz-Signature=abc',
      'https://bucket.example/export.zip',
      'https://bucket.example/export.tar',
    ]) {
      const r = await renderWith({ staticExport: { bundleUrl: url }, trust: { existingSecret: 'release-keys' } });
      expect(r.status, url).not.toBe(0);
      expect(r.stderr).toMatch(/raw export archive.*unsigned.*staticExport\.allowUnsigned=true/);
      const ok = await renderWith({ staticExport: { bundleUrl: url, allowUnsigned: true } });
      expect(ok.status, ok.stderr).toBe(0);
    }
  });

  it('a signed package needs the keys that may sign it: with no trust.* and no allowUnsigned the render fails naming them', async () => {
    const r = await renderWith({ staticExport: { bundleUrl: 'https://bucket.example/docs.airlock' } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/trust\.existingSecret.*trust\.existingConfigMap.*trust\.keys/);
    for (const trust of [
      { existingSecret: 's' },
      { existingConfigMap: 'c' },
      { keys: { 'r.pub': '-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEA\n-----END PUBLIC KEY-----\n' } },
    ]) {
      const ok = await renderWith({ staticExport: { bundleUrl: 'https://bucket.example/docs.airlock' }, trust });
      expect(ok.status, ok.stderr).toBe(0);
    }
    const follow = await renderWith({ follow: { enabled: true, tokenSecret: 't', url: 'http://mirror.internal' } });
    expect(follow.status).not.toBe(0);
    expect(follow.stderr).toMatch(/follow\.allowUnsigned/);
  });

  it("the emptyDir is the store itself, so the trust keys mounted inside it leave it writable for the pod's user", async () => {
    const { objects } = await renderWith({
      staticExport: { bundleUrl: 'https://bucket.example/docs.airlock' },
      trust: { existingSecret: 'release-keys' },
      mirror: { enabled: true, tokensSecret: 'm' },
    });
    for (const name of ['docs-airlock', 'docs-airlock-mirror']) {
      const dep = new apps.Deployment(find(objects, 'Deployment', name) as never);
      const mounts = dep.spec!.template.spec!.containers[0]!.volumeMounts!;
      expect(mounts.find((m) => m.name === 'data')!.mountPath, name).toBe('/data/store');
      expect(mounts.find((m) => m.name === 'trust')!.mountPath, name).toBe('/data/store/trusted-keys');
    }
  });

  it.each([
    [{ replicaCount: 'three' }, 'replicaCount'],
    [{ staticExport: { enabled: 'yes' } }, 'staticExport'],
    [{ staticExport: { bundleUrl: 'ftp://x/y.tar.gz' } }, 'bundleUrl'],
    [{ staticExport: { version: '../etc' } }, 'version'],
    [{ staticExport: { download: { minBytesPerSecond: 1.5 } } }, 'minBytesPerSecond'],
    [{ staticExport: { download: { headersTimeoutSeconds: 0 } } }, 'headersTimeoutSeconds'],
    [{ staticExport: { download: { timeoutSeconds: '60' } } }, 'timeoutSeconds'],
    [{ staticExport: { download: { rateWindowSeconds: 3601 } } }, 'rateWindowSeconds'],
    [{ staticExport: { download: { retries: 3 } } }, 'retries'],
    [{ deployment: { type: 'sky' } }, 'deployment'],
    [{ features: { search: 1 } }, 'search'],
    [{ features: { teleport: true } }, 'teleport'],
    [{ port: 80 }, 'port'],
    [{ mirror: { enabled: true } }, 'tokensSecret'],
    [{ metrics: { serviceMonitor: { interval: 30 } } }, 'interval'],
    [{ follow: { enabled: true, url: 'http://m' } }, 'tokenSecret'],
    [{ follow: { pollSeconds: '2' } }, 'pollSeconds'],
    [{ follow: { url: 'file:///etc/passwd' } }, 'url'],
    [{ skewGraceSeconds: -1 }, 'skewGraceSeconds'],
    [{ tls: { secretName: 7 } }, 'secretName'],
  ])("a values file with wrong types is refused by the chart's schema: %j", async (values, key) => {
    const r = await renderWith(values);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(key);
  });

  it('a library (library.sites): serve --library over its own folder, each site with its bundle, pin, keys, host names and features; airlock reads the values it renders', async () => {
    const sites = [
      {
        domain: 'docs.vendor.example',
        bundleUrl: 'https://bucket.example/docs.vendor.example-v3.airlock',
        version: 'v3',
        trustKeys: ['vendor.pub'],
        hosts: ['vendor-docs.intranet'],
        features: { 'api-playground': false },
      },
      { domain: 'docs.other.example', bundleUrl: 'https://bucket.example/export.tar.gz', allowUnsigned: true },
    ];
    const { status, objects, stderr } = await renderWith({ library: { sites }, trust: { keys: { 'vendor.pub': PEM } } });
    expect(status, stderr).toBe(0);
    validateAll(objects);
    const c = (find(objects, 'Deployment', 'docs-airlock')!.spec as any).template.spec.containers[0]; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(c.args.slice(0, 5)).toEqual(['serve', '--library', '/data/library', '--values', '/etc/airlock/values.yaml']);
    expect(c.env.map((e: { name: string }) => e.name)).not.toContain('AIRLOCK_STORE');
    expect(c.volumeMounts).toEqual(
      expect.arrayContaining([
        { name: 'data', mountPath: '/data/library' },
        { name: 'trust', mountPath: '/etc/airlock-trust', readOnly: true },
      ]),
    );
    const file = join(work, 'rendered-library.yaml');
    await writeFile(file, find(objects, 'Secret', 'docs-airlock')!.stringData!['values.yaml']!);
    const loaded = await loadValues(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.values.library!.sites).toEqual([
      {
        domain: 'docs.vendor.example',
        hosts: ['vendor-docs.intranet'],
        version: 'v3',
        features: { 'api-playground': false },
        staticExport: { bundleUrl: sites[0]!.bundleUrl, allowUnsigned: false, trust: ['/etc/airlock-trust/vendor.pub'] },
      },
      { domain: 'docs.other.example', staticExport: { bundleUrl: sites[1]!.bundleUrl, allowUnsigned: true } },
    ]);
    // What serve --library reads of it: no one-store key, every site checked (libraryConfig refuses nothing).
    expect(() => libraryConfig({}, loaded.values, file)).not.toThrow();
  });

  it('a library release its pods could not start fails to render, naming the site', async () => {
    const site = { domain: 'docs.vendor.example', bundleUrl: 'https://bucket.example/docs.vendor.example-v3.airlock', trustKeys: ['vendor.pub'] };
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ library: { sites: [site, site] }, trust: { existingSecret: 'k' } }, /library\.sites\[1\] \(docs\.vendor\.example\): the domain is listed twice/],
      [{ library: { sites: [{ ...site, trustKeys: undefined }] }, trust: { existingSecret: 'k' } }, /library\.sites\[0\].*name them in trustKeys/],
      [{ library: { sites: [site] } }, /trustKeys name keys of trust\.\*/],
      [{ library: { sites: [site] }, trust: { keys: { 'other.pub': PEM } } }, /trustKeys names vendor\.pub, which trust\.keys does not hold/],
      [
        { library: { sites: [{ ...site, bundleUrl: 'https://bucket.example/export.tgz' }] }, trust: { existingSecret: 'k' } },
        /raw export archive.*allowUnsigned=true/,
      ],
      [{ library: { sites: [site] }, trust: { existingSecret: 'k' }, tls: { secretName: 'tls' } }, /tls\.secretName is for one site's release/],
      [{ library: { sites: [{ ...site, domain: 'Docs.Vendor.example' }] }, trust: { existingSecret: 'k' } }, /domain/],
      [{ library: { sites: [{ ...site, domain: '10.0.0.1' }] }, trust: { existingSecret: 'k' } }, /\(10\.0\.0\.1\): the domain is an address/],
      [{ library: { sites: [{ ...site, hosts: ['localhost'] }] }, trust: { existingSecret: 'k' } }, /hosts: localhost is not a host name of a site/],
      [{ library: { sites: [{ ...site, hosts: ['..'] }] }, trust: { existingSecret: 'k' } }, /hosts: \.\. is not a host name of a site/],
      [
        {
          library: {
            sites: [
              { ...site, hosts: ['docs.internal'] },
              { ...site, domain: 'b.example', hosts: ['DOCS.INTERNAL'] },
            ],
          },
          trust: { existingSecret: 'k' },
        },
        /library\.sites\[1\] \(b\.example\): hosts: docs\.internal is given to docs\.vendor\.example already/,
      ],
      [{ library: { sites: [{ ...site, bundleUrl: '' }] }, trust: { existingSecret: 'k' } }, /bundleUrl must be an http\(s\) URL/],
      // URLs the pod's parser refuses: the chart says so, naming the site, rather than a pod that crash-loops.
      ...(['http://127.0.0.1:99999/x.airlock', 'http://127.0.0.1:65536/x.airlock', 'http://h.example:8x/x.airlock', 'http://[::1]:100000/x'] as const).map(
        (u): [Record<string, unknown>, RegExp] => [
          { library: { sites: [{ ...site, bundleUrl: u }] }, trust: { existingSecret: 'k' } },
          /library\.sites\[0\] \(docs\.vendor\.example\): bundleUrl has a port that is no number from 0 to 65535/,
        ],
      ),
      // Hosts the pod's URL parser refuses, and shapes Go's parser fails on with its own words: said naming the site.
      ...(
        [
          ['http://xn--/x.airlock', /bundleUrl has an empty punycode label/],
          ['http://256.1.1.1/x.airlock', /bundleUrl has a host that ends in a number but is no IPv4 address/],
          ['http://a.1/x.airlock', /bundleUrl has a host that ends in a number but is no IPv4 address/],
          ['http://1.2.3.4.5/x.airlock', /bundleUrl has a host that ends in a number but is no IPv4 address/],
          ['http://[fe80::1%25eth0]/x.airlock', /bundleUrl has a host in brackets that is no IPv6 address/],
          ['http://[::1/x.airlock', /bundleUrl has a host in brackets that is no IPv6 address/],
          ['http://ex%41mple.com/x.airlock', /bundleUrl has a percent-escape in its host name/],
          ['http://exa mple.com/x.airlock', /bundleUrl has a space, a backslash or a control character/],
          ['http://127.0.0.1\\@evil/x', /bundleUrl has a space, a backslash or a control character/],
          ['http://b.example/x%zz.airlock', /bundleUrl has a % that starts no percent-escape/],
        ] as const
      ).map(([u, said]): [Record<string, unknown>, RegExp] => {
        // The pod refuses it too; the chart is stricter for escapes and backslashes (Go's parser refuses them) and an empty xn-- label (Node 24 takes it).
        if (!/[%\\]|\/\/xn--\//.test(u)) expect(() => new URL(u), u).toThrow();
        return [
          { library: { sites: [{ ...site, bundleUrl: u }] }, trust: { existingSecret: 'k' } },
          new RegExp(/library\.sites\[0\] \(docs\.vendor\.example\): /.source + said.source),
        ];
      }),
      [{ staticExport: { bundleUrl: 'http://[fe80::1%25eth0]/x.airlock' }, trust: { existingSecret: 'k' } }, /staticExport\.bundleUrl has a host in brackets/],
      [
        { staticExport: { bundleUrl: 'https://bucket.example:70000/x.airlock' }, trust: { existingSecret: 'k' } },
        /staticExport\.bundleUrl has a port that is no number from 0 to 65535/,
      ],
      [{ library: { sites: [{ ...site, features: { search: true } }] }, trust: { existingSecret: 'k' } }, /search and assistant would be relayed/],
      [{ library: { sites: [site] }, trust: { existingSecret: 'k' }, deployment: { type: 'cloud' } }, /deployment\.type cloud turns search and assistant on/],
      [
        { library: { sites: [site] }, trust: { existingSecret: 'k' }, staticExport: { bundleUrl: 'https://b/x.airlock' } },
        /staticExport\.bundleUrl is one site's bundle/,
      ],
    ];
    for (const [values, message] of cases) {
      const r = await renderWith(values);
      expect(r.status, JSON.stringify(values)).not.toBe(0);
      expect(r.stderr).toMatch(message);
    }
    // And those it takes (as the pod does): a port, an [IPv6] literal, a user, an underscore.
    for (const u of [
      'https://bucket.example:8443/x.airlock?X-Sig=1',
      'http://[fd00::1]:8080/x.airlock',
      'http://[fd00::1]/x.airlock',
      'http://10.0.0.5/x.airlock',
      'https://u@b.example/x.airlock',
      'http://a_b.example/x.airlock',
      'http://1.2.3/x.airlock',
      'http://0x7f.1/x.airlock',
      'http://[::ffff:127.0.0.1]/x.airlock',
      'http://xn--mnchen-3ya.de/x.airlock',
      'http://b.example/a%20b.airlock',
    ]) {
      expect(() => new URL(u), u).not.toThrow();
      const r = await renderWith({ library: { sites: [{ ...site, bundleUrl: u }] }, trust: { existingSecret: 'k' } });
      expect(r.status, `${u}: ${r.stderr}`).toBe(0);
    }
  });
});
