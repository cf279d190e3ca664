import { cpSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Numbered paths and copies of base fixtures inside one test file's temp folder. A hostile-input
 * file builds its base fixture (keys, packages, an imported store, a trust policy) once and copies
 * it for each case: a copy costs a few milliseconds, a rebuild runs the command again (about half
 * a second of CPU per run).
 */
export interface Scratch {
  /** A path not used yet in the folder: `<tag>-<n>`. */
  fresh(tag: string): string;
  /** A copy of `template` (a folder, links kept as links) at a fresh path. */
  copy(template: string, tag?: string): string;
  /** The folder `build` makes at `<name>`, built on first use and copied for every use. */
  copied(name: string, build: (path: string) => void): string;
}

export function scratch(dir: () => string): Scratch {
  let n = 0;
  const built = new Set<string>();
  const s: Scratch = {
    fresh: (tag) => join(dir(), `${tag}-${++n}`),
    copy: (template, tag = 'store') => {
      const to = s.fresh(tag);
      cpSync(template, to, { recursive: true, verbatimSymlinks: true });
      return to;
    },
    copied: (name, build) => {
      const template = join(dir(), `template-${name}`);
      if (!built.has(template)) {
        build(template);
        built.add(template);
      }
      return s.copy(template, name);
    },
  };
  return s;
}
