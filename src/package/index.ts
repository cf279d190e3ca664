/** The `.airlock` package: manifest, keys, writer, reader, verification (DESIGN.md "src/package"). */
export { ManifestSchema, parseManifest, serializeManifest, MANIFEST_FORMAT, ARCHIVE_NAMES, type Manifest } from './manifest.js';
export { generateKeyPair, loadPrivateKey, loadPublicKey, fingerprint } from './keys.js';
export { writePackage } from './writer.js';
export { readPackage, type PackageLayout } from './reader.js';
export { checkSignature, compareToManifest, verifyPackage, type VerifyOptions, type VerifyReport } from './verify.js';
