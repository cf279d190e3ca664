/** The `.airlock` package: manifest, keys, writer, reader, verification (docs/design.md "src/package"). */
export {
  ManifestSchema,
  parseManifest,
  serializeManifest,
  MANIFEST_FORMAT,
  STORE_IDENTITY,
  MANIFEST_BOUNDS,
  ARCHIVE_NAMES,
  type Manifest,
} from './manifest.js';
export { VERSION_LABEL, HOST_NAME, CONTROL_CHARS, timeLabel, checkDomain, checkLabel } from './label.js';
export { checkJsonBounds, type JsonBounds } from './json-bounds.js';
export { checkManifestLimits } from './limits.js';
export { countPages } from './pages.js';
export { generateKeyPair, loadPrivateKey, loadPublicKey, fingerprint } from './keys.js';
export { writePackage } from './writer.js';
export {
  readPackage,
  readPackageRange,
  verifyVendorMembers,
  inputPath,
  inputRange,
  MAX_MANIFEST_BYTES,
  MAX_SIGNATURES,
  SIGNATURE_BYTES,
  signatureMember,
  type PackageLayout,
  type PackageInput,
} from './reader.js';
export { addSignature, type SignResult } from './sign.js';
export { signersOf, signaturesOf } from './signature.js';
export { checkSignature, compareToManifest, verifyPackage, type VerifyOptions, type VerifyReport } from './verify.js';
export {
  packArchive,
  writeScannedPackage,
  packagePath,
  MEMBER,
  type PackOptions,
  type PackSummary,
  type PackageMeta,
  type VendoredFiles,
  type VendorCollector,
} from './pack.js';
export { outputExists } from './writer.js';
export { sniff, type Sniffed } from './sniff.js';
export {
  VENDOR_KINDS,
  VENDOR_TYPES,
  VENDOR_PATH,
  MAX_VENDOR_FILES,
  MAX_VENDOR_FILE_BYTES,
  MAX_VENDOR_TOTAL_BYTES,
  MAX_VENDOR_URLS,
  vendorUrlProblem,
  vendorContentType,
  type VendorKind,
  type VendorRecord,
} from './vendor.js';
