/** src/serve — the public surface (docs/design.md "src/serve"). */
export { createAirlockServer, DEFAULT_CSP, type AirlockServer, type AirlockServerOptions, type LeaseLike } from './server.js';
export { indexOf, type AppEnv } from './app.js';
export type { LoadedIndex, FileEntry, TransformHtml, TransformOutput } from './version-index.js';
export type { CspSource } from './load.js';
export type { SiteInput, FileRecord } from './source.js';
export { prebuildHtmlCache, type PrebuildReport } from './html-prebuild.js';
export { isTransformedPage } from './html-pages.js';
export { htmlContextFor } from './html-context.js';
export { createMetrics, type ServeMetrics } from './metrics.js';
export type { HtmlTransformSpec } from './html-pages.js';
export { loadTlsPair, type TlsFiles, type TlsPair } from './tls.js';
export { parseBasePath } from './base-path.js';
