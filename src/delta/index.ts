/** Delta packages: what turns one stored version into the next (docs/design.md "src/delta"). */
export { DELTA_FORMAT, DELTA_MEMBERS, encodeDeltaManifest, parseDeltaEnvelope, type DeltaManifest, type DeltaOp } from './format.js';
export { digestTemplate, fillDigests } from './template.js';
export { readDelta, isDeltaPackage, resolveTarget, finishTarget, type DeltaLayout, type ResolvedTarget } from './reader.js';
export { rebuildSite, readBaseAhead, namePatchThatFailed, type Rebuilt } from './apply.js';
export { writeCanonicalPackage, canonicalArchiveOffset, CANONICAL_ARCHIVE, type CanonicalPackage } from './canonical.js';
export { makeDelta, deltaPath, fullPath, type DeltaOptions, type DeltaSummary } from './make.js';
export { verifyDelta, type DeltaVerifyReport } from './verify.js';
export { addDeltaSignature, type DeltaSignResult } from './sign.js';
