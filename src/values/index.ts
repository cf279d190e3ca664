/** src/values — `airlock serve --values FILE`: Helm-style values, start-up plan and its executor. */
export { loadValues, checkValues, type LoadedValues } from './load.js';
export { valuesSchema, type Values } from './schema.js';
export { FLAG_RANGES, mergeSettings, type ServeFlags, type ServeSettings } from './settings.js';
export { planStart, afterFailure, type Plan, type PlanInput, type StoreView } from './plan.js';
export { prepareStart, type Prepared } from './start.js';
export { readyRoutes } from './ready.js';
export { extraRoutes } from './wire.js';
export { startBootstrap, type Bootstrap } from './bootstrap.js';
