/** src/relay — same-origin relays for the discovery features that are on. */
export { createRelay, type Relay, type RelayOptions } from './routes.js';
export { relayConfig, type RelayConfig } from './config.js';
export { DEFAULT_LIMITS, RelayLimiter, clientKey, type RelayLimits } from './limits.js';
export { FixedWindowLimiter, type LimitRule, type Hit, type TakeResult } from './limiter.js';
export { DEFAULT_MAX_BODY_BYTES, readJsonBody, type BodyResult } from '../util/json-body.js';
export { validateAssistant, validateSearchBody, validateSearchQuery, SearchBodySchema, SearchQuerySchema, type Problem } from './validate.js';
export { DEFAULT_TIMEOUTS, type UpstreamTimeouts } from './upstream.js';
