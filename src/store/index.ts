/** The versioned store (docs/DESIGN.md "src/store"). */
export { resolveStore, storePaths, versionPaths } from './paths.js';
export { requireStore } from './location.js';
export { importPackage, type ImportOptions, type ImportResult } from './import.js';
export { listVersions, type VersionInfo } from './list.js';
export { activate, rollback } from './activate.js';
export { prune, pruneReport, planPrune, type PruneReport, type PruneEntry, type KeepReason } from './prune.js';
export { readState, type StoreState } from './state.js';
export { loadVersion, type LoadedVersion } from './load.js';
export { acquireLease, readLeases, type Lease, type LeaseRecord } from './leases.js';
export { acquireLock, withLock, type StoreLock } from './lock.js';
export { buildVariants, type VariantsReport } from './variants/build.js';
export type { ProgressEvent } from './progress.js';
export type { VersionMeta } from './meta.js';
export type { VariantEntry } from './variants/index-file.js';
export { loadPolicy, verifyChain, newPolicy, trustPaths, liveKeys, thresholdFor, type LoadedPolicy } from './policy.js';
export { initPolicy, rotatePolicy, readNewPolicy, describe as describePolicy } from './trust-ops.js';
export { admitPackage, readSeen, type Admission } from './admit.js';
export { verifyAudit, readAudit, appendAudit, auditPaths, type AuditLine, type AuditReport } from './audit.js';
