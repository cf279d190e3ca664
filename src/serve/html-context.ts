import type { ResolvedFeatures, TransformContext } from '../features/index.js';

/**
 * The options of src/features' page transform for a deployment: the one place `serve` and
 * `import` (which builds the default deployment's HTML cache ahead) get them from, so both arrive
 * at the same cache key. While search/assistant are relayed, the page's docs-api-base is '/' so
 * the browser calls this origin only.
 */
export function htmlContextFor(resolved: ResolvedFeatures, o: { relayed?: boolean } = {}): TransformContext {
  return { features: { ...resolved.features }, deployment: resolved.deployment, ...(o.relayed ? { assistantBase: '/' } : {}) };
}
