import { UsageError } from '../errors.js';
import {
  DEFAULT_DEPLOYMENT,
  DEPLOYMENTS,
  FEATURES,
  FEATURE_KEY,
  MATRIX,
  REQUIRED,
  formatMatrix,
  isDeployment,
  parseFeature,
  type Deployment,
  type Feature,
  type FeatureFlags,
} from './matrix.js';

export interface ResolvedFeatures {
  deployment: Deployment;
  features: FeatureFlags;
}

export interface ResolveInput {
  deployment?: string;
  /** Values of `--enable`; each may itself be a comma list (`--enable search,assistant`). */
  enable?: readonly string[];
  disable?: readonly string[];
}

const MATRIX_REF = 'see the deployment matrix (airlock serve --help)';

function splitNames(values: readonly string[] | undefined, flag: string): Feature[] {
  const names = (values ?? [])
    .flatMap((v) => v.split(','))
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const unknown = names.filter((n) => parseFeature(n) === undefined);
  if (unknown.length > 0) {
    throw new UsageError(
      `${flag}: unknown feature${unknown.length > 1 ? 's' : ''} ${unknown.map((n) => JSON.stringify(n)).join(', ')}; known features: ${FEATURES.join(', ')}`,
      { subject: flag, unknown },
      'AIRLOCK_UNKNOWN_FEATURE',
    );
  }
  return [...new Set(names.map((n) => parseFeature(n)!))];
}

/**
 * The effective flags for a deployment: 'on' cells are on, 'configurable' ones only with
 * `--enable`, 'unavailable' ones never. Rules (decided here, documented in --help):
 * - `--enable` of an unavailable feature is a usage error that prints the feature's matrix row;
 * - `--enable` of an 'on' feature, `--disable` of an off one: accepted, nothing to do;
 * - `--disable` turns off an 'on' or enabled feature (an operator may always switch MORE off),
 *   except static-export, which is the site itself;
 * - the same feature in both `--enable` and `--disable` is a usage error (ambiguous intent).
 */
export function resolveFeatures(input: ResolveInput = {}): ResolvedFeatures {
  const deployment = input.deployment ?? DEFAULT_DEPLOYMENT;
  if (!isDeployment(deployment)) {
    throw new UsageError(
      `--deployment: unknown deployment type ${JSON.stringify(deployment)}; expected one of ${DEPLOYMENTS.join(', ')}`,
      { subject: '--deployment' },
      'AIRLOCK_UNKNOWN_DEPLOYMENT',
    );
  }
  const enable = splitNames(input.enable, '--enable');
  const disable = splitNames(input.disable, '--disable');

  const both = enable.filter((f) => disable.includes(f));
  if (both.length > 0) {
    throw new UsageError(`${both.join(', ')} given to both --enable and --disable`, { subject: '--enable', features: both });
  }
  const unavailable = enable.filter((f) => MATRIX[f][deployment] === 'unavailable');
  if (unavailable.length > 0) {
    throw new UsageError(
      `--enable ${unavailable.join(',')}: ${unavailable.join(', ')} ${unavailable.length > 1 ? 'are' : 'is'} unavailable in ${deployment} deployments; ${MATRIX_REF}:\n${formatMatrix(unavailable)}`,
      { subject: '--enable', deployment, features: unavailable },
      'AIRLOCK_FEATURE_UNAVAILABLE',
    );
  }
  const required = disable.filter((f) => REQUIRED.has(f));
  if (required.length > 0) {
    throw new UsageError(
      `--disable ${required.join(',')}: ${required.join(', ')} is the site airlock serves and cannot be disabled; ${MATRIX_REF}:\n${formatMatrix(required)}`,
      { subject: '--disable', deployment, features: required },
      'AIRLOCK_FEATURE_REQUIRED',
    );
  }

  const flags = {} as FeatureFlags;
  for (const f of FEATURES) {
    const cell = MATRIX[f][deployment];
    const on = cell === 'on' || (cell === 'configurable' && enable.includes(f));
    flags[FEATURE_KEY[f]] = on && !disable.includes(f);
  }
  return { deployment, features: flags };
}

/** Is this feature on? (by CLI name, for the relays and fail-fast paths) */
export function isOn(resolved: ResolvedFeatures, feature: Feature): boolean {
  return resolved.features[FEATURE_KEY[feature]];
}

export interface FeaturesDocument {
  deployment: Deployment;
  features: FeatureFlags;
}

/**
 * Exactly the body of `GET /_airlock/features` as documented, with keys in the documented order
 * (deployment, then search, assistant, analytics, apiPlayground, staticExport, localSearch, localAssistant) so that
 * JSON.stringify of it is byte-stable — the injected script's CSP hash depends on that.
 */
export function featuresDocument(resolved: ResolvedFeatures): FeaturesDocument {
  const features = {} as FeatureFlags;
  for (const f of FEATURES) features[FEATURE_KEY[f]] = resolved.features[FEATURE_KEY[f]] === true;
  return { deployment: resolved.deployment, features };
}

export function featuresJson(resolved: ResolvedFeatures): string {
  return JSON.stringify(featuresDocument(resolved));
}
