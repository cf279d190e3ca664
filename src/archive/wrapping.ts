/**
 * The single wrapping folder to strip ("site/"), or "". Pure. Exports often pack the site as
 * `site/index.html, site/a.html, ...`; strip only when every file sits under one first segment.
 */
export function wrappingFolder(paths: string[]): string {
  let first: string | undefined;
  for (const p of paths) {
    const slash = p.indexOf('/');
    if (slash <= 0) return '';
    const head = p.slice(0, slash);
    if (first === undefined) first = head;
    else if (head !== first) return '';
  }
  return first === undefined ? '' : `${first}/`;
}
