import { describe, expect, it } from 'vitest';
import { EXIT, UsageError } from '../../src/errors.js';
import { DEPLOYMENTS, FEATURES, FEATURE_KEY, MATRIX, featuresDocument, featuresJson, formatMatrix, resolveFeatures } from '../../src/features/index.js';

function usageError(fn: () => unknown): UsageError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).exitCode).toBe(EXIT.USAGE);
    return err as UsageError;
  }
  throw new Error('expected a UsageError');
}

describe('the deployment matrix (deployment types and features)', () => {
  it('holds exactly the contract table', () => {
    expect(MATRIX).toEqual({
      search: { cloud: 'on', 'client-hosted': 'configurable', 'air-gapped': 'unavailable' },
      assistant: { cloud: 'on', 'client-hosted': 'configurable', 'air-gapped': 'unavailable' },
      analytics: { cloud: 'on', 'client-hosted': 'configurable', 'air-gapped': 'unavailable' },
      'api-playground': { cloud: 'on', 'client-hosted': 'on', 'air-gapped': 'configurable' },
      'static-export': { cloud: 'on', 'client-hosted': 'on', 'air-gapped': 'on' },
      'local-search': { cloud: 'configurable', 'client-hosted': 'configurable', 'air-gapped': 'on' },
      'local-assistant': { cloud: 'configurable', 'client-hosted': 'configurable', 'air-gapped': 'configurable' },
    });
  });

  it('defaults to air-gapped and answers the contract document byte for byte', () => {
    expect(featuresJson(resolveFeatures())).toBe(
      '{"deployment":"air-gapped","features":{"search":false,"assistant":false,"analytics":false,"apiPlayground":false,"staticExport":true,"localSearch":true,"localAssistant":false}}',
    );
  });

  it('cloud: everything on; client-hosted: configurable ones off until enabled', () => {
    expect(resolveFeatures({ deployment: 'cloud' }).features).toEqual({
      search: true,
      assistant: true,
      analytics: true,
      apiPlayground: true,
      staticExport: true,
      localSearch: false,
      localAssistant: false,
    });
    expect(resolveFeatures({ deployment: 'client-hosted' }).features).toEqual({
      search: false,
      assistant: false,
      analytics: false,
      apiPlayground: true,
      staticExport: true,
      localSearch: false,
      localAssistant: false,
    });
    expect(resolveFeatures({ deployment: 'client-hosted', enable: ['assistant,analytics'] }).features).toEqual({
      search: false,
      assistant: true,
      analytics: true,
      apiPlayground: true,
      staticExport: true,
      localSearch: false,
      localAssistant: false,
    });
    expect(resolveFeatures({ enable: ['api-playground'] }).features.apiPlayground).toBe(true);
    expect(resolveFeatures({ enable: ['apiPlayground'] }).features.apiPlayground).toBe(true);
  });

  it('every cell of the matrix resolves as its availability says, with and without --enable', () => {
    for (const d of DEPLOYMENTS) {
      const plain = resolveFeatures({ deployment: d }).features;
      for (const f of FEATURES) {
        const cell = MATRIX[f][d];
        expect(plain[FEATURE_KEY[f]], `${f} in ${d}`).toBe(cell === 'on');
        if (cell !== 'unavailable') expect(resolveFeatures({ deployment: d, enable: [f] }).features[FEATURE_KEY[f]]).toBe(true);
      }
    }
  });

  it('--enable of an unavailable feature exits 2 and prints its matrix row', () => {
    for (const f of ['search', 'assistant', 'analytics'] as const) {
      const err = usageError(() => resolveFeatures({ deployment: 'air-gapped', enable: [f] }));
      expect(err.code).toBe('AIRLOCK_FEATURE_UNAVAILABLE');
      expect(err.message).toContain(`${f} is unavailable in air-gapped deployments`);
      expect(err.message).toContain('see the deployment matrix (airlock serve --help)');
      expect(err.message).toContain(formatMatrix([f]));
      expect(err.message).toMatch(new RegExp(`\\n${f}\\s+on\\s+configurable \\(off unless enabled\\)\\s+unavailable`));
    }
  });

  it('unknown features and deployments are usage errors naming them', () => {
    const e1 = usageError(() => resolveFeatures({ enable: ['search-bar', 'chat'] }));
    expect(e1.message).toContain('"search-bar"');
    expect(e1.message).toContain('"chat"');
    expect(e1.code).toBe('AIRLOCK_UNKNOWN_FEATURE');
    const e2 = usageError(() => resolveFeatures({ disable: ['nope'] }));
    expect(e2.message).toMatch(/^--disable: unknown feature "nope"/);
    const e3 = usageError(() => resolveFeatures({ deployment: 'on-prem' }));
    expect(e3.message).toContain('"on-prem"');
    expect(e3.message).toContain('cloud, client-hosted, air-gapped');
  });

  it('--disable turns off an on feature; static-export cannot be disabled; both flags at once is refused', () => {
    expect(resolveFeatures({ deployment: 'cloud', disable: ['analytics', 'search'] }).features).toEqual({
      search: false,
      assistant: true,
      analytics: false,
      apiPlayground: true,
      staticExport: true,
      localSearch: false,
      localAssistant: false,
    });
    expect(resolveFeatures({ deployment: 'air-gapped', disable: ['search'] }).features.search).toBe(false);
    const e = usageError(() => resolveFeatures({ deployment: 'cloud', disable: ['static-export'] }));
    expect(e.code).toBe('AIRLOCK_FEATURE_REQUIRED');
    expect(e.message).toContain(formatMatrix(['static-export']));
    expect(usageError(() => resolveFeatures({ deployment: 'cloud', enable: ['search'], disable: ['search'] })).message).toContain('search');
  });

  it("the table --help prints says what local-assistant needs to be on (a model), as the guide's matrix does", () => {
    expect(formatMatrix(['local-assistant', 'local-search'])).toMatch(
      /\nlocal-assistant\s+configurable \(needs a model\)\s+configurable \(needs a model\)\s+configurable \(needs a model\)\nlocal-search\s+configurable \(off unless enabled\)/,
    );
  });

  it('featuresDocument keeps the contract key order whatever order the flags object has', () => {
    const doc = featuresDocument({
      deployment: 'cloud',
      features: { localAssistant: false, localSearch: true, staticExport: true, apiPlayground: false, analytics: true, assistant: false, search: true },
    });
    expect(Object.keys(doc)).toEqual(['deployment', 'features']);
    expect(Object.keys(doc.features)).toEqual(['search', 'assistant', 'analytics', 'apiPlayground', 'staticExport', 'localSearch', 'localAssistant']);
  });
});
