import { UsageError } from '../errors.js';
import { numberOption, type NumberRange } from '../util/number-option.js';
import type { Values } from './schema.js';

/** The serve flags this module merges with a values file (strings as parseArgs gives them). */
export interface ServeFlags {
  store?: string;
  version?: string;
  deployment?: string;
  enable?: string[];
  disable?: string[];
  port?: string;
  host?: string;
  mirror?: boolean;
  'mirror-tokens'?: string;
  follow?: string;
  'follow-poll-ms'?: string;
  trust?: string[];
  'allow-unsigned'?: boolean;
  'fleet-lead-ms'?: string;
  'skew-grace'?: string;
  'base-path'?: string;
  'assistant-model'?: string;
  'assistant-model-name'?: string;
}

export interface StaticExportSettings {
  bundleUrl: string;
  domain?: string;
  trust: string[];
  allowUnsigned: boolean;
  /** staticExport.download.* in milliseconds (the defaults are installBundle's). */
  limits: { headersTimeoutMs?: number; minBytesPerSecond?: number; rateWindowMs?: number; totalMs?: number };
  /** staticExport.download.maxBytes: the most bytes the download may bring (default: the archive limits' bound). */
  maxBytes?: number;
}
export interface MirrorSettings {
  tokensFile: string;
  secretFile?: string;
  ttlSeconds?: number;
  publicUrl?: string;
  fleetLeadMs?: number;
}
export interface FollowSettings {
  url: string;
  tokenFile?: string;
  trust: string[];
  allowUnsigned: boolean;
  pollMs?: number;
}

/** What serve runs with: flag strings (validated later by serve's own parsers) after the merge. */
export interface ServeSettings {
  store?: string;
  version?: string;
  deployment?: string;
  enable: string[];
  disable: string[];
  port?: string;
  host?: string;
  staticExport: StaticExportSettings | null;
  mirror: MirrorSettings | null;
  follow: FollowSettings | null;
  /** Skew protection grace, seconds (flag string or the values file's number). */
  skewGrace?: string;
  /** The site's sub-path as written (serve --base-path or basePath), checked by serve. */
  basePath?: string;
  /** local-assistant's model: an OpenAI-compatible API's base URL, and the model's name there (serve --assistant-model, localAssistant.model). */
  assistantModel?: string;
  assistantModelName?: string;
  /** A values file was given (serve --values): messages may then name its keys. */
  valuesFile: boolean;
}

const ms = (seconds: number | undefined) => (seconds === undefined ? undefined : Math.round(seconds * 1000));
const names = (list: string[] | undefined) =>
  (list ?? [])
    .flatMap((s) => s.split(','))
    .map((s) => s.trim())
    .filter(Boolean);

/** The ranges of serve's numeric flags whose values this module merges (checked by serve first, too). */
export const FLAG_RANGES = {
  port: { min: 0, max: 65535 },
  'fleet-lead-ms': { min: 100, max: 600_000 },
  'follow-poll-ms': { min: 100, max: 300_000 },
  'skew-grace': { min: 0, max: 7 * 24 * 3600, decimals: true, unit: 'seconds' },
} as const satisfies Record<string, NumberRange>;

/**
 * Why a mirror's URL cannot be followed, or null: http(s), and nothing a link would carry as a
 * secret (user and password, a query) or lose (a fragment) when paths are put after it; the token
 * goes in AIRLOCK_MIRROR_TOKEN.
 */
export function followUrlProblem(url: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return 'it is not a URL';
  }
  if (!/^https?:$/.test(u.protocol)) return 'it is not http(s)';
  if (u.username !== '' || u.password !== '' || u.search !== '' || u.hash !== '' || /[?#@]/.test(url.replace(/^https?:\/\//, '')))
    return 'give it without a user, password, query or fragment (the token comes from AIRLOCK_MIRROR_TOKEN)';
  return null;
}

/** A values file's staticExport (the top-level one, or a library site's), or null when it names no bundle or is disabled. */
export function staticExportSettings(se: Values['staticExport']): StaticExportSettings | null {
  if (se === undefined || se.enabled === false || se.bundleUrl === undefined) return null;
  return {
    bundleUrl: se.bundleUrl,
    domain: se.domain,
    trust: se.trust ?? [],
    allowUnsigned: se.allowUnsigned ?? false,
    limits: {
      headersTimeoutMs: ms(se.download?.headersTimeoutSeconds),
      minBytesPerSecond: se.download?.minBytesPerSecond,
      rateWindowMs: ms(se.download?.rateWindowSeconds),
      totalMs: ms(se.download?.timeoutSeconds),
    },
    maxBytes: se.download?.maxBytes,
  };
}

/**
 * Flags given on the command line win over the values file (pure): per key, and per feature for
 * --enable/--disable (a flag naming a feature replaces the values file's word on it).
 */
export function mergeSettings(flags: ServeFlags, given?: Values): ServeSettings {
  const v: Values = given ?? {};
  const flagEnable = names(flags.enable);
  const flagDisable = names(flags.disable);
  const byFlag = new Set([...flagEnable, ...flagDisable]);
  const fromValues = Object.entries(v.features ?? {}).filter(([f, on]) => on !== undefined && !byFlag.has(f));
  const se = v.staticExport;
  const followUrl = flags.follow ?? v.follow?.url;
  const why = followUrl === undefined ? null : followUrlProblem(followUrl);
  if (why !== null) throw new UsageError(`--follow needs the mirror's http(s) URL: ${why}`, { subject: '--follow' });
  const leadMs =
    numberOption(flags['fleet-lead-ms'], '--fleet-lead-ms', FLAG_RANGES['fleet-lead-ms']) ??
    (v.mirror?.fleetLeadSeconds === undefined ? undefined : Math.round(v.mirror.fleetLeadSeconds * 1000));
  const pollMs =
    numberOption(flags['follow-poll-ms'], '--follow-poll-ms', FLAG_RANGES['follow-poll-ms']) ??
    (v.follow?.pollSeconds === undefined ? undefined : Math.round(v.follow.pollSeconds * 1000));
  const mirrorOn = flags.mirror === true || v.mirror?.enabled === true;
  const tokensFile = flags['mirror-tokens'] ?? v.mirror?.tokensFile;
  if (mirrorOn && tokensFile === undefined) {
    // Fail closed: a mirror without tokens would hand out the whole store.
    throw new UsageError(
      '--mirror needs --mirror-tokens FILE (or mirror.tokensFile in the values file): a file of sha256:<hex> token hashes, see docs/mirror.md',
      { subject: '--mirror-tokens' },
    );
  }
  return {
    store: flags.store ?? v.store,
    version: flags.version ?? v.staticExport?.version,
    deployment: flags.deployment ?? v.deployment?.type,
    enable: [...flagEnable, ...fromValues.filter(([, on]) => on).map(([f]) => f)],
    disable: [...flagDisable, ...fromValues.filter(([, on]) => !on).map(([f]) => f)],
    port: flags.port ?? (v.port === undefined ? undefined : String(v.port)),
    host: flags.host ?? v.host,
    staticExport: staticExportSettings(se),
    mirror: mirrorOn
      ? { tokensFile: tokensFile!, secretFile: v.mirror?.secretFile, ttlSeconds: v.mirror?.linkTtlSeconds, publicUrl: v.mirror?.publicUrl, fleetLeadMs: leadMs }
      : null,
    follow:
      followUrl === undefined
        ? null
        : {
            url: followUrl,
            tokenFile: v.follow?.tokenFile,
            pollMs,
            trust: flags.trust?.length ? flags.trust : (v.follow?.trust ?? []),
            allowUnsigned: flags['allow-unsigned'] ?? v.follow?.allowUnsigned ?? false,
          },
    skewGrace: flags['skew-grace'] ?? (v.skewGraceSeconds === undefined ? undefined : String(v.skewGraceSeconds)),
    basePath: flags['base-path'] ?? v.basePath,
    assistantModel: flags['assistant-model'] ?? v.localAssistant?.model?.url,
    assistantModelName: flags['assistant-model-name'] ?? v.localAssistant?.model?.name,
    valuesFile: given !== undefined,
  };
}
