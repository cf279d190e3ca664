import { shown } from '../util/terminal.js';
import type { DecisionPart, Report, VolumesRead } from '../package/verify-report.js';
import type { DeltaVerifyReport } from './verify.js';

/** The report of a delta that verified: what holds without its base, and what import checks there. */
export function deltaReport(path: string, d: DeltaVerifyReport, volumes: VolumesRead | null, decision: DecisionPart): Report {
  const m = d.manifest;
  return {
    json: {
      ok: true,
      package: path,
      kind: 'delta',
      domain: m.domain,
      version: m.version,
      base: m.base,
      target: m.target,
      signed: d.signed,
      signer: d.signer,
      targetSignatures: d.targetSignatures,
      payload: m.payload,
      ...(decision ? decision.json : {}),
      volumes,
    },
    text: () =>
      shown`OK delta of ${m.domain} ${m.base.version} → ${m.version}: ` +
      (d.signed ? shown`signed by ${d.signer}` : 'UNSIGNED (accepted with --allow-unsigned)') +
      shown`; base ${m.base.version} manifest sha256 ${m.base.manifestSha256}; payload sha256 matches; ${d.targetSignatures} target signature(s)` +
      '\n  import needs that exact base in the store; the rebuilt version is checked file by file against the signed target manifest there' +
      (decision ? decision.text() : ''),
  };
}
