import { shown } from '../util/terminal.js';
import type { FetchEvent, FetchSummary } from './fetch.js';

/**
 * The signing warning, given once the form is known (before the download): only a raw archive
 * packaged here without --sign-key ends unsigned; a mirror's original package keeps its
 * signature (the summary's `signed` and `signature` say whether --trust checked it).
 */
export function formWarnings(report: (e: FetchEvent) => void, warn: (line: string) => void, o: { signed: boolean; trust: boolean }): (e: FetchEvent) => void {
  return (e) => {
    if (e.type === 'form' && e.form === 'archive') {
      if (!o.signed)
        warn(
          'airlock fetch: warning: no --sign-key: the package will not be signed here, and airlock import accepts an unsigned package only with --allow-unsigned (airlock keygen makes a key)',
        );
      if (o.trust)
        warn(
          'airlock fetch: warning: --trust is not used: the service sent a raw export archive, not a signed package (--trust checks the package of an airlock mirror)',
        );
    }
    report(e);
  };
}

/** A mirror's package whose signature nothing checked, or that has none: said once it is written (null: nothing to say). */
export function packageWarning(summary: FetchSummary): string | null {
  if (summary.signature === 'unverified')
    return shown`airlock fetch: warning: the mirror's package carries a signature that was NOT checked (no --trust); check it with: airlock verify ${summary.package} --trust KEY.pub`;
  if (summary.form === 'package' && summary.signature === 'none') return "airlock fetch: warning: the mirror's package is unsigned";
  return null;
}
