import { shown } from '../util/terminal.js';
import { fmtBytes } from '../util/units.js';
import type { VerifyReport } from './verify.js';

/** What `airlock verify` prints: one JSON document, or its prose (built only when shown). */
export interface Report {
  json: Record<string, unknown>;
  text: () => string;
}
/** The volumes a package was read from in place (null: one file). */
export interface VolumesRead {
  count: number;
  paths: string[];
}
/** A store's decision added to a report (verify --store): its JSON fields and its line. */
export type DecisionPart = Report | null;

/** The report of a package that verified: what was checked and what matched the manifest. */
export function packageReport(path: string, r: VerifyReport, volumes: VolumesRead | null, decision: DecisionPart): Report {
  const m = r.manifest;
  return {
    json: {
      ok: true,
      package: path,
      domain: m.domain,
      version: m.version,
      signed: r.signed,
      signer: r.signer,
      signers: r.signers,
      files: r.files,
      bytes: r.bytes,
      archive: m.archive,
      ...(m.sequence !== undefined ? { sequence: m.sequence } : {}),
      ...(m.expiresAt ? { expiresAt: m.expiresAt } : {}),
      ...(m.audience ? { audience: m.audience } : {}),
      ...(m.vendor ? { vendored: m.vendor.length } : {}),
      ...(decision ? decision.json : {}),
      volumes,
    },
    text: () =>
      shown`OK ${m.domain} ${m.version}: ` +
      (r.signed ? shown`signed by ${r.signer}` : 'UNSIGNED (accepted with --allow-unsigned)') +
      shown`; ${m.archive.name} sha256 ${m.archive.sha256}; ${r.files} files, ${fmtBytes(r.bytes)} match the manifest` +
      (m.vendor ? `; ${m.vendor.length} vendored third-party files match too` : '') +
      (volumes ? `; read in place from ${volumes.count} volumes` : '') +
      (decision ? decision.text() : ''),
  };
}
