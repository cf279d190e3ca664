/** The `.airlock` package: manifest, keys, writer, reader, verification (DESIGN.md "src/package"). */
export { ManifestSchema, parseManifest, serializeManifest, MANIFEST_FORMAT, STORE_IDENTITY, MANIFEST_BOUNDS, ARCHIVE_NAMES, type Manifest } from './manifest.js';
export { VERSION_LABEL, HOST_NAME, CONTROL_CHARS, timeLabel, checkDomain, checkLabel } from './label.js';
export { checkJsonBounds, type JsonBounds } from './json-bounds.js';
export { checkManifestLimits } from './limits.js';
export { generateKeyPair, loadPrivateKey, loadPublicKey, fingerprint } from './keys.js';
export { writePackage } from './writer.js';
export { readPackage, inputPath, inputRange, MAX_SIGNATURES, signatureMember, type PackageLayout, type PackageInput } from './reader.js';
export { addSignature, type SignResult } from './sign.js';
export { signersOf, signaturesOf } from './signature.js';
export { checkSignature, compareToManifest, verifyPackage, type VerifyOptions, type VerifyReport } from './verify.js';
export { packArchive, writeScannedPackage, packagePath, MEMBER, type PackOptions, type PackSummary, type PackageMeta } from './pack.js';
export { outputExists } from './writer.js';
export { sniff, type Sniffed } from './sniff.js';
