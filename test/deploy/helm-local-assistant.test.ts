/**
 * deploy/helm/airlock's local-assistant values (localAssistant.model.*), rendered offline by a real
 * helm (test/helpers/helm.ts): the model's URL and name reach the values file airlock reads, its
 * key comes from an existing Secret mounted as a file (AIRLOCK_ASSISTANT_MODEL_KEY_FILE, as the
 * follow token is), never from a ConfigMap or the values file; a release whose pods would exit 2
 * (half a model, credentials in the URL, a library) is refused, naming the key. Also every name the
 * chart puts in a spec (Secrets, ConfigMaps, claims, storage classes, the disruption budget): checked.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as apps from 'kubernetes-models/apps/v1';
import { extractHelm, type Helm } from '../helpers/helm.js';
import { CHART, findObject, renderChart, validateAll } from '../helpers/chart.js';
import { loadValues } from '../../src/values/index.js';
import { mergeSettings } from '../../src/values/settings.js';
import { modelConfig } from '../../src/assistant/config.js';

let helm: Helm;
let work: string;

beforeAll(async () => {
  helm = await extractHelm();
  work = await mkdtemp(join(tmpdir(), 'airlock-chart-model-'));
}, 60_000);
afterAll(async () => {
  await helm?.remove();
  await rm(work, { recursive: true, force: true });
});

const renderWith = (values: Record<string, unknown>) => renderChart(helm, work, values);
const find = findObject;

const SITE = { staticExport: { bundleUrl: 'https://bucket.example/docs.airlock' }, trust: { existingSecret: 'release-keys' } };
const MODEL = { url: 'http://vllm.models.svc:8000/v1', name: 'llama-3.1-70b-instruct' };

describe('helm chart: local-assistant (localAssistant.model)', () => {
  it('renders a model with its key from an existing Secret: mounted as a file named by AIRLOCK_ASSISTANT_MODEL_KEY_FILE, no ConfigMap holds it, airlock reads what it renders', async () => {
    const { status, objects, stderr } = await renderWith({ ...SITE, localAssistant: { model: { ...MODEL, keySecret: 'model-key' } } });
    expect(status, stderr).toBe(0);
    validateAll(objects);
    const pod = new apps.Deployment(find(objects, 'Deployment', 'docs-airlock') as never).spec!.template.spec!;
    const c = pod.containers[0]!;
    expect(c.env).toContainEqual({ name: 'AIRLOCK_ASSISTANT_MODEL_KEY_FILE', value: '/etc/airlock-model/key' });
    expect(c.env!.map((e) => e.name)).not.toContain('AIRLOCK_ASSISTANT_MODEL_KEY');
    expect(c.volumeMounts).toContainEqual({ name: 'model-key', mountPath: '/etc/airlock-model', readOnly: true });
    expect(pod.volumes!.find((v) => v.name === 'model-key')!.secret).toEqual({ secretName: 'model-key', items: [{ key: 'key', path: 'key' }] });
    // The key's Secret is only named by the pod: no ConfigMap, and not the values file, says anything of it.
    for (const o of objects.filter((x) => x.kind === 'ConfigMap')) expect(JSON.stringify(o)).not.toMatch(/model-key|airlock-model|keySecret/);
    const valuesYaml = find(objects, 'Secret', 'docs-airlock')!.stringData!['values.yaml']!;
    expect(valuesYaml).not.toMatch(/model-key|airlock-model|keySecret|[Kk]ey:/);
    // What airlock serve --values makes of it, with the key file the pod would have.
    const file = join(work, 'model-values.yaml');
    await writeFile(file, valuesYaml);
    const loaded = await loadValues(file);
    expect(loaded.warnings).toEqual([]);
    expect(loaded.values.localAssistant).toEqual({ model: MODEL });
    const s = mergeSettings({}, loaded.values);
    await mkdir(join(work, 'airlock-model'), { recursive: true });
    await writeFile(join(work, 'airlock-model', 'key'), 'sk-in-network-0123\n');
    const env = { AIRLOCK_ASSISTANT_MODEL_KEY_FILE: c.env!.find((e) => e.name === 'AIRLOCK_ASSISTANT_MODEL_KEY_FILE')!.value!.replace('/etc', work) };
    const model = await modelConfig({ url: s.assistantModel, name: s.assistantModelName, enable: [], disable: [] }, true, env);
    expect(model).toEqual({ ...MODEL, key: 'sk-in-network-0123' });
  });

  it('a model without a key (many in-network servers need none): no key file, no key volume', async () => {
    const { status, objects, stderr } = await renderWith({ ...SITE, localAssistant: { model: MODEL }, features: { 'local-assistant': true } });
    expect(status, stderr).toBe(0);
    const c = (find(objects, 'Deployment', 'docs-airlock')!.spec as any).template.spec; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(JSON.stringify(c)).not.toMatch(/AIRLOCK_ASSISTANT_MODEL_KEY|model-key/);
    expect(find(objects, 'Secret', 'docs-airlock')!.stringData!['values.yaml']).toContain(`url: "${MODEL.url}"`);
  });

  it("the install notes say the site's assistant is answered in the pods, by which model, and what the model host is sent", () => {
    const sets = ['staticExport.bundleUrl=https://bucket.example/docs.airlock', 'trust.existingSecret=release-keys'];
    const model = [`localAssistant.model.url=${MODEL.url}`, `localAssistant.model.name=${MODEL.name}`, 'localAssistant.model.keySecret=model-key'];
    const notes = (more: string[]) => {
      const r = helm.run(['install', 'docs', CHART, '--dry-run=client', '--namespace', 'docs', ...[...sets, ...more].flatMap((x) => ['--set', x])]);
      expect(r.status, r.stderr).toBe(0);
      return r.stdout.slice(r.stdout.indexOf('NOTES:'));
    };
    expect(notes(model)).toContain(`answered in the pods (local-assistant) by the model ${MODEL.name} at ${MODEL.url}, with the key in the Secret model-key.`);
    expect(notes(model)).toContain('The model host is sent only each question, the sections quoted to answer it and the conversation');
    expect(notes([])).not.toContain('local-assistant');
    expect(notes([...model, 'features.local-assistant=false'])).not.toContain('local-assistant');
  });

  it('half a model fails to render, naming the key that is missing', async () => {
    const cases: Array<[Record<string, unknown>, RegExp]> = [
      [{ url: MODEL.url }, /localAssistant\.model\.url needs localAssistant\.model\.name/],
      [{ name: MODEL.name }, /localAssistant\.model\.name needs localAssistant\.model\.url/],
      [{ name: MODEL.name, keySecret: 'model-key' }, /localAssistant\.model\.name needs localAssistant\.model\.url/],
      [{ keySecret: 'model-key' }, /localAssistant\.model\.keySecret is the key of a model: set localAssistant\.model\.url and localAssistant\.model\.name/],
    ];
    for (const [model, message] of cases) {
      const r = await renderWith({ ...SITE, localAssistant: { model } });
      expect(r.status, JSON.stringify(model)).not.toBe(0);
      expect(r.stderr).toMatch(message);
    }
    const on = await renderWith({ ...SITE, features: { 'local-assistant': true } });
    expect(on.status).not.toBe(0);
    expect(on.stderr).toMatch(/features\.local-assistant=true answers with a model.*localAssistant\.model\.url/);
  });

  it('a URL with credentials (the key goes in keySecret), a query, or one the pod would refuse fails to render, naming the key', async () => {
    const cases: Array<[string, RegExp]> = [
      ['http://user:sk-secret@vllm.models.svc:8000/v1', /localAssistant\.model\.url has credentials.*localAssistant\.model\.keySecret/],
      ['https://token@vllm.models.svc/v1', /localAssistant\.model\.url has credentials/],
      ['http://vllm.models.svc:8000/v1?api_key=sk-secret', /localAssistant\.model\.url has a query or fragment/],
      ['http://vllm.models.svc:80000/v1', /localAssistant\.model\.url has a port that is no number from 0 to 65535/],
      ['http://256.1.1.1/v1', /localAssistant\.model\.url has a host that ends in a number but is no IPv4 address/],
      ['ftp://vllm.models.svc/v1', /localAssistant\/model\/url/],
    ];
    for (const [url, message] of cases) {
      const r = await renderWith({ ...SITE, localAssistant: { model: { ...MODEL, url } } });
      expect(r.status, url).not.toBe(0);
      expect(r.stderr).toMatch(message);
      expect(r.stderr, 'the key is not repeated').not.toContain('sk-secret');
    }
  });

  it('a Secret, ConfigMap, claim or storage-class name that is no Kubernetes name (YAML smuggled into a spec, a slash) fails to render, for every such key', async () => {
    const bad = [
      'model-key\n        - name: host\n          hostPath:\n            path: /',
      'model-key\n      hostNetwork: true',
      'Not_A/Valid Name!',
      'a'.repeat(254),
    ];
    const withName: Array<[string, (n: string) => Record<string, unknown>]> = [
      ['localAssistant.model.keySecret', (n) => ({ ...SITE, localAssistant: { model: { ...MODEL, keySecret: n } } })],
      ['trust.existingSecret', (n) => ({ ...SITE, trust: { existingSecret: n } })],
      ['trust.existingConfigMap', (n) => ({ ...SITE, trust: { existingConfigMap: n } })],
      ['tls.secretName', (n) => ({ ...SITE, tls: { secretName: n } })],
      ['follow.tokenSecret', (n) => ({ ...SITE, follow: { enabled: true, url: 'http://mirror.docs.svc:8080', tokenSecret: n } })],
      ['mirror.tokensSecret', (n) => ({ ...SITE, mirror: { enabled: true, tokensSecret: n } })],
      ['mirror.secretSecret', (n) => ({ ...SITE, mirror: { enabled: true, tokensSecret: 'mirror-tokens', secretSecret: n } })],
      ['mirror.persistence.storageClass', (n) => ({ ...SITE, mirror: { enabled: true, tokensSecret: 'mirror-tokens', persistence: { storageClass: n } } })],
      ['mirror.persistence.existingClaim', (n) => ({ ...SITE, mirror: { enabled: true, tokensSecret: 'mirror-tokens', persistence: { existingClaim: n } } })],
      ['podDisruptionBudget.maxUnavailable', (n) => ({ ...SITE, podDisruptionBudget: { enabled: true, maxUnavailable: n } })],
    ];
    for (const [key, values] of withName)
      for (const name of bad) {
        const r = await renderWith(values(name));
        expect(r.status, `${key} = ${JSON.stringify(name)}`).not.toBe(0);
        expect(r.stderr).toContain(key.split('.').at(-1));
      }
    const good = await renderWith({ ...SITE, localAssistant: { model: { ...MODEL, keySecret: 'model-key.v2' } } });
    expect(good.status, good.stderr).toBe(0);
    const mirror = await renderWith({
      ...SITE,
      mirror: { enabled: true, tokensSecret: 'mirror-tokens', persistence: { storageClass: 'fast-ssd', existingClaim: 'docs-store' } },
    });
    expect(mirror.status, mirror.stderr).toBe(0);
    expect(JSON.stringify(mirror.objects)).toContain('"claimName":"docs-store"');
    for (const budget of [1, '50%']) expect((await renderWith({ ...SITE, podDisruptionBudget: { enabled: true, maxUnavailable: budget } })).status).toBe(0);
  });

  it('a model URL with port 0 fails to render (the pod refuses it too)', async () => {
    const r = await renderWith({ ...SITE, localAssistant: { model: { ...MODEL, url: 'http://vllm.models.svc:0/v1' } } });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/localAssistant\.model\.url has port 0/);
  });

  it("a library (library.sites) refuses local-assistant, as serve --library does; the service's assistant on too is refused", async () => {
    const library = { library: { sites: [{ domain: 'docs.example.com', bundleUrl: 'https://bucket.example/export.tgz', allowUnsigned: true }] } };
    const lib = await renderWith({ ...library, localAssistant: { model: MODEL } });
    expect(lib.status).not.toBe(0);
    expect(lib.stderr).toMatch(/localAssistant\.model\.url: local-assistant answers on one site's server; a library \(library\.sites\) does not answer it/);
    const libOn = await renderWith({ ...library, features: { 'local-assistant': true } });
    expect(libOn.status).not.toBe(0);
    expect(libOn.stderr).toMatch(/features\.local-assistant=true: a library \(library\.sites\) does not answer local-assistant/);
    const cloud = await renderWith({ ...SITE, deployment: { type: 'cloud' }, localAssistant: { model: MODEL } });
    expect(cloud.status).not.toBe(0);
    expect(cloud.stderr).toMatch(/both would answer the same endpoint; set features\.assistant=false or features\.local-assistant=false/);
    const ok = await renderWith({ ...SITE, deployment: { type: 'cloud' }, features: { assistant: false }, localAssistant: { model: MODEL } });
    expect(ok.status, ok.stderr).toBe(0);
  });

  it.each([
    [{ localAssistant: { model: { ...MODEL, name: 'a\u0007b' } } }, 'name'],
    [{ localAssistant: { model: { ...MODEL, name: 'x'.repeat(201) } } }, 'name'],
    [{ localAssistant: { model: { ...MODEL, keySecret: { name: 'model-key' } } } }, 'keySecret'],
    [{ localAssistant: { model: { ...MODEL, key: 'sk-1' } } }, 'key'],
  ])("a wrong localAssistant value is refused by the chart's schema: %j", async (values, key) => {
    const r = await renderWith({ ...SITE, ...values });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(key);
  });
});
