import type { Admission } from './admit.js';

/** The rule that admitted a package, in words, for its audit line. */
export function describeAdmission(a: Admission): string {
  if (a.rule === 'policy') return `policy ${a.policySerial}: ${a.signers.length} of ${a.need} signer(s) (${a.signerNames.join(', ')})`;
  return a.need === null ? 'no trust policy: unsigned, accepted with --allow-unsigned' : 'no trust policy: signed by a trusted key';
}
