import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * A transform worker's cold start is on the path of the first pages served after a switch
 * (src/serve/html-cache/pool.ts): what its entry loads is kept to the transform itself. zod alone
 * took 50-80 ms of a 120-160 ms start when page.ts reached it through the cache index's reader.
 * This walks the entry's static value imports (import type is erased) and lists the packages.
 */
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function graph(entry: string): { files: string[]; packages: Set<string> } {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    const specs = [...text.matchAll(/^\s*(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'/gm), ...text.matchAll(/^\s*import\s+'([^']+)'/gm)].map(
      (m) => m[1]!,
    );
    for (const spec of specs) {
      if (spec.startsWith('.')) visit(join(dirname(file), spec.replace(/\.js$/, '.ts')));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  };
  visit(join(SRC, entry));
  return { files: [...seen].map((f) => relative(SRC, f)), packages };
}

describe('transform worker start-up', () => {
  it('the worker entry loads the HTML rewriter and nothing else from node_modules (no zod: cold start)', () => {
    const g = graph('serve/html-cache/worker-entry.ts');
    expect(g.files).toContain('features/html.ts'); // the walk does reach the transform
    expect(g.files).toContain('serve/html-cache/page.ts');
    expect([...g.packages]).toEqual(['html-rewriter-wasm']);
  });

  it('the walk sees a package behind a relative import (it would have caught the index reader)', () => {
    expect([...graph('serve/html-cache/index-file.ts').packages]).toContain('zod');
  });
});
