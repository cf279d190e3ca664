/** src/values — `airlock serve --values FILE`: Helm-style values parsed and checked, merged under the flags, the start-up plan (pure). */
export { loadValues, checkValues, type LoadedValues } from './load.js';
export { valuesSchema, type Values } from './schema.js';
export { FLAG_RANGES, mergeSettings, type ServeFlags, type ServeSettings } from './settings.js';
export { planStart, afterFailure, type Plan, type PlanInput, type StoreView } from './plan.js';
