/** src/fetch — export job → resumable download → verified, signed package (docs/design.md). */
export { fetchPackage, partPathFor, type FetchOptions, type FetchSummary, type FetchEvent } from './fetch.js';
export { download, type DownloadOptions, type DownloadResult, type DownloadProgress, type FreshLink } from './download.js';
export { DEFAULT_DOWNLOAD_LIMITS, type DownloadLimits } from './bounds.js';
export { waitForJob, bundleWhenReady, type ExportApi } from './poll.js';
export { deriveVersionLabel, checkDomain } from './label.js';
export { readSidecar, removePart, sidecarPath, type Sidecar } from './sidecar.js';
export * as validators from './validators.js';
