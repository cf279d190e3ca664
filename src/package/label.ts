/**
 * The names a package carries, owned here because the package format defines them (version
 * labels, host names): every other module (CLI flags, store folders, mirror ids,
 * values files) checks against these same rules. Pure.
 */
import { UsageError } from '../errors.js';

/** Version labels: also the name of a store folder, so no separators, no dot segments. */
export const VERSION_LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * A DNS host name (RFC 1123 labels: letters, digits, inner hyphens; at most 63 bytes a label, 253
 * in all). The domain names a file (`<domain>-<version>.airlock`) and is printed to operators,
 * so no separators, dot segments, ports, spaces or control characters can pass.
 */
/**
 * A domain as airlock writes it (manifests, library folders): a host name in lower case. Domain
 * names are case-insensitive; one spelling keeps a per-domain rule (a threshold, the seen order,
 * a library's site) from being side-stepped by another.
 */
export const DOMAIN = /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const HOST_NAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/**
 * C0 and C1 control characters and DEL: what a terminal may take as a command (ESC [ …, OSC,
 * CSI U+009B). No manifest string meant for people may hold one.
 */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
export const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

/** A time as a version label, `YYYYMMDD-HHMMSS` in UTC: sorts by time, and is always a valid label. */
export function timeLabel(t: Date): string {
  return t
    .toISOString()
    .replace(/\.\d+Z$/, '')
    .replace(/[-:]/g, '')
    .replace('T', '-');
}

/** A domain given by the user (`--domain` of fetch and pack): a host name, else a usage error naming the flag. */
export function checkDomain(domain: string, flag = '--domain'): string {
  if (!HOST_NAME.test(domain)) throw new UsageError(`invalid ${flag} ${JSON.stringify(domain)}: must be a host name like docs.example.com`, { subject: flag });
  return domain.toLowerCase(); // written in lower case (DOMAIN)
}

/** A version label given by the user, else a usage error naming the flag. */
export function checkLabel(v: string, flag = '--version-label'): string {
  if (!VERSION_LABEL.test(v)) throw new UsageError(`invalid ${flag} ${JSON.stringify(v)}: must match ${VERSION_LABEL.source}`, { subject: flag });
  return v;
}
