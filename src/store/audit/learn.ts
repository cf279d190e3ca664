import type { AuditLine } from './files.js';

/**
 * What a verified log says the store has had, so that a deleted or older record does not quietly
 * undo it: the highest trust policy serial accepted (0: none; `trust init` is 1, each `trust rotate`
 * names its new serial), every domain imported (seen.json must keep an order for each) and, per
 * domain, the highest sequence (packageOrder, what seen.json records) of the imports whose line
 * carries it (importLine; lines written before lines carried it name only the domain), and the
 * SHA-256 of each accepted policy's bytes, by serial, where its line records one (policyDetail).
 */
export interface AuditHistory {
  policySerial: number;
  importedDomains: Set<string>;
  importedSequence: Map<string, number>;
  policyDigests: Map<number, string>;
}

/** The detail of a trust init or rotate line, carrying the accepted policy's SHA-256 (learn reads it back). */
export function policyDetail(detail: string, policySha256: string): string {
  return `${detail}; policy sha256 ${policySha256}`;
}
const POLICY_SHA256 = /; policy sha256 ([0-9a-f]{64})$/;

/** The detail of an import's line, carrying the sequence seen.json is about to record (learn reads it back). */
export function importDetail(sequence: number | null, detail: string | null | undefined): string | null {
  return sequence === null ? (detail ?? null) : `sequence ${sequence}${detail ? `; ${detail}` : ''}`;
}
const SEQUENCE = /^sequence (\d+)(?:;|$)/;

/** How writeLine lays out the outcomes that matter to AuditHistory (JSON.stringify of AuditLine, in its key order). */
const OUTCOME = {
  init: Buffer.from('"outcome":"policy-init"'),
  rotated: Buffer.from('"outcome":"policy-rotated"'),
  imported: Buffer.from('"outcome":"imported"'),
  failed: Buffer.from('"outcome":"failed"'),
};

/** The history being learnt, and the last import's line (a `failed` line naming it takes its sequence back). */
export interface Learning extends AuditHistory {
  last: { n: number; domain: string; before: number | undefined } | null;
  /** The last policy line, and the serial before it (a `failed` line naming it takes it back). */
  lastPolicy: { n: number; outcome: string; serial: number; before: number } | null;
}
export const newHistory = (): Learning => ({
  policySerial: 0,
  importedDomains: new Set(),
  importedSequence: new Map(),
  policyDigests: new Map(),
  last: null,
  lastPolicy: null,
});

/** Fold one chained line into `h` (only the few lines that matter are parsed). */
export function learn(h: Learning, line: Buffer): void {
  if (line.includes(OUTCOME.init)) h.policySerial = Math.max(h.policySerial, 1); // even were the rest unreadable
  if (line.includes(OUTCOME.init) || line.includes(OUTCOME.rotated) || line.includes(OUTCOME.imported) || line.includes(OUTCOME.failed)) {
    let l: Partial<AuditLine>;
    try {
      l = JSON.parse(line.toString('utf8')) as Partial<AuditLine>;
    } catch {
      return; // chained bytes that are not JSON: explainLine has already let them through as not ours to judge
    }
    if (l.outcome === 'imported' && typeof l.domain === 'string') {
      h.importedDomains.add(l.domain);
      const seq = typeof l.detail === 'string' ? SEQUENCE.exec(l.detail) : null;
      const before = h.importedSequence.get(l.domain);
      h.last = seq && typeof l.n === 'number' ? { n: l.n, domain: l.domain, before } : null;
      if (seq) h.importedSequence.set(l.domain, Math.max(before ?? 0, Number(seq[1])));
    }
    if (l.outcome === 'failed' && h.last && typeof l.detail === 'string' && l.detail.startsWith(`line ${h.last.n} (imported) did not take effect`)) {
      if (h.last.before === undefined) h.importedSequence.delete(h.last.domain);
      else h.importedSequence.set(h.last.domain, h.last.before);
      h.last = null;
    }
    const p = h.lastPolicy;
    if (l.outcome === 'failed' && p && typeof l.detail === 'string' && l.detail.startsWith(`line ${p.n} (${p.outcome}) did not take effect`)) {
      h.policySerial = p.before;
      h.policyDigests.delete(p.serial);
      h.lastPolicy = null;
    }
    const m = l.outcome === 'policy-rotated' && typeof l.detail === 'string' ? /^serial \d+ -> (\d+)\b/.exec(l.detail) : null;
    const serial = l.outcome === 'policy-init' ? 1 : m ? Number(m[1]) : 0;
    if (serial > 0) {
      h.lastPolicy = typeof l.n === 'number' ? { n: l.n, outcome: l.outcome!, serial, before: h.policySerial } : null;
      h.policySerial = Math.max(h.policySerial, serial);
      const digest = typeof l.detail === 'string' ? POLICY_SHA256.exec(l.detail) : null;
      if (digest) h.policyDigests.set(serial, digest[1]!);
    }
  }
}
