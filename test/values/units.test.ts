import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { afterFailure, checkValues, mergeSettings, planStart } from '../../src/values/index.js';

describe('values file checks', () => {
  it('unknown keys are warnings naming each key path; known keys are kept', () => {
    const { values, warnings } = checkValues(
      { port: 9000, colour: 'red', staticExport: { version: 'v1', bundelUrl: 'x' }, mirror: { enabled: true, extra: { a: 1 } } },
      'v.yaml',
    );
    expect(values.port).toBe(9000);
    expect(values.staticExport?.version).toBe('v1');
    expect(warnings.join('\n')).toContain('unknown key colour');
    expect(warnings.join('\n')).toContain('unknown key staticExport.bundelUrl');
    expect(warnings.join('\n')).toContain('unknown key mirror.extra');
    expect(warnings).toHaveLength(3);
  });
  it("a library site's bad key is named by its domain too (the chart renders sites as a list: the index alone finds nothing)", () => {
    const sites = [
      { domain: 'docs.alpha.example', staticExport: { bundleUrl: 'https://b.example/a.airlock' } },
      { domain: 'docs.\u001b[31mbeta.example', staticExport: { bundleUrl: 'http://256.1.1.1/x.airlock' } },
    ];
    expect(() => checkValues({ library: { sites } }, 'v.yaml')).toThrow(
      'library.sites.1 (docs.\\x1b[31mbeta.example).staticExport.bundleUrl: must be an http(s) URL',
    );
  });
  it('wrong types are a UsageError (exit 2) naming every bad key path', () => {
    const bad = { port: 'eighty', staticExport: { enabled: 'yes', bundleUrl: 'ftp://x/y' }, deployment: { type: 'moon' }, features: { search: 1 } };
    let err: unknown;
    try {
      checkValues(bad, 'v.yaml');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    const e = err as UsageError;
    expect(e.exitCode).toBe(2);
    for (const k of ['port', 'staticExport.enabled', 'staticExport.bundleUrl', 'deployment.type', 'features.search']) expect(e.message).toContain(k);
    expect(() => checkValues(['a list'], 'v.yaml')).toThrow(/\(top level\)/);
  });
  it('a numeric version (YAML reads `version: 2` as a number) is a label; a bad label is refused', () => {
    expect(checkValues({ staticExport: { version: 2 } }, 'v').values.staticExport?.version).toBe('2');
    expect(() => checkValues({ staticExport: { version: '../x' } }, 'v')).toThrow(/staticExport\.version/);
  });
  it('flags win over values, key by key and feature by feature', () => {
    const { values } = checkValues(
      {
        port: 9000,
        host: '0.0.0.0',
        store: '/s',
        deployment: { type: 'cloud' },
        features: { search: false, analytics: true },
        staticExport: { version: 'v1', bundleUrl: 'https://x/b.tgz' },
      },
      'v',
    );
    const s = mergeSettings({ port: '0', version: 'v2', enable: ['search'], deployment: 'client-hosted' }, values);
    expect(s).toMatchObject({
      port: '0',
      host: '0.0.0.0',
      store: '/s',
      version: 'v2',
      deployment: 'client-hosted',
      enable: ['search', 'analytics'],
      disable: [],
    });
    expect(s.staticExport).toMatchObject({ bundleUrl: 'https://x/b.tgz', allowUnsigned: false });
    expect(mergeSettings({}, { staticExport: { enabled: false, bundleUrl: 'https://x/b' } }).staticExport).toBeNull();
  });
  it('a mirror without a tokens file is refused (fail closed)', () => {
    expect(() => mergeSettings({ mirror: true }, {})).toThrow(/--mirror-tokens/);
    expect(mergeSettings({ mirror: true, 'mirror-tokens': '/t' }, {}).mirror).toMatchObject({ tokensFile: '/t' });
  });
});

describe('start-up planner', () => {
  const store = { active: 'v1', labels: ['v1', 'v2'] };
  it('pinned and present: serve it, no download (even with a bundleUrl)', () => {
    expect(planStart({ version: 'v2', bundleUrl: 'https://x', worker: false }, store, '/s')).toMatchObject({ kind: 'serve', version: 'v2' });
  });
  it('pinned and absent: download under that label, and no fallback to another version', () => {
    const p = planStart({ version: 'v3', bundleUrl: 'https://x', worker: false }, store, '/s');
    expect(p).toEqual({ kind: 'download', url: 'https://x', label: 'v3', fallback: null });
    const after = afterFailure(p as Extract<typeof p, { kind: 'download' }>, 'boom', '/s');
    expect(after.serve).toBeNull();
    expect(after.message).toMatch(/pinned version v3 is not in store \/s.*boom.*regenerate/s);
    const refused = afterFailure(p as Extract<typeof p, { kind: 'download' }>, 'corrupt', '/s', true);
    expect(refused.message).toMatch(/corrupt\. The bundle itself was refused: point bundleUrl at a sound export/);
    expect(refused.message).not.toMatch(/regenerate/);
  });
  it('unpinned with a bundleUrl: download, falling back to the active version', () => {
    const p = planStart({ bundleUrl: 'https://x', worker: false }, store, '/s');
    expect(p).toMatchObject({ kind: 'download', fallback: 'v1' });
    expect(afterFailure(p as Extract<typeof p, { kind: 'download' }>, 'boom', '/s').serve).toBe('v1');
  });
  it('nothing to serve: pinned without bundleUrl, or no active version — with advice', () => {
    expect(planStart({ version: 'v9', worker: false, values: true }, store, '/s')).toMatchObject({
      kind: 'fail',
      message: expect.stringMatching(/airlock import.*staticExport\.bundleUrl.*\(v1, v2\)/) as string,
    });
    expect(planStart({ worker: false, values: true }, { active: null, labels: [] }, '/s')).toMatchObject({
      kind: 'fail',
      message: expect.stringMatching(/--activate.*staticExport\.bundleUrl/) as string,
    });
  });
  it("nothing to serve without a values file: the store's versions and what to run, no values keys", () => {
    const pinned = planStart({ version: 'v9', worker: false }, store, '/s');
    expect(pinned).toMatchObject({ kind: 'fail', message: 'version v9 is not in store /s; it holds v1, v2' });
    const empty = planStart({ worker: false }, { active: null, labels: [] }, '/s');
    expect(empty).toMatchObject({ kind: 'fail', message: 'store /s holds no version yet; import one (airlock import PKG --store /s --activate)' });
    const idle = planStart({ worker: false }, { active: null, labels: ['v1', 'v2'] }, '/s');
    expect(idle).toMatchObject({ kind: 'fail', message: 'store /s has no active version; it holds v1, v2: activate one (airlock activate V --store /s)' });
  });
  it('a cluster worker never downloads (the primary did)', () => {
    expect(planStart({ bundleUrl: 'https://x', worker: true }, store, '/s')).toMatchObject({ kind: 'serve' });
  });
});
