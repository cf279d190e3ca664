/** Delta packages: what turns one stored version into the next (docs/DESIGN.md "src/package/delta"). */
export { DELTA_FORMAT, DELTA_MEMBERS, parseDeltaManifest, serializeDeltaManifest, type DeltaManifest, type DeltaOp } from './format.js';
export { readDelta, isDeltaPackage, resolveTarget, type DeltaLayout, type ResolvedTarget } from './reader.js';
export { rebuildSite } from './apply.js';
export { writeCanonicalPackage, CANONICAL_ARCHIVE } from './canonical.js';
export { makeDelta, deltaPath, fullPath, type DeltaOptions, type DeltaSummary } from './make.js';
