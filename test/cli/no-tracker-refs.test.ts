import { describe, it, expect } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { airlock, airlockAsync } from '../helpers/bin.js';
import { COMMANDS } from '../../src/cli/main.js';

/**
 * What a user or a reader of the source sees names features, never a tracker entry or an internal
 * document: no "issue 14", "issues #3", "CONTRACT ..." or "stop 35" in any file under src/, in any
 * --help, or in the message of a refused feature.
 */
const REFERENCE = /\b[Ii]ssues? #?[0-9]+|CONTRACT|\b[Ss]top [0-9]+/;
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));
}

/** Every line of `text` that cites a tracker entry or an internal document, as "where: line". */
function references(where: string, text: string): string[] {
  return text.split('\n').flatMap((line, i) => (REFERENCE.test(line) ? [`${where}:${i + 1}: ${line.trim()}`] : []));
}

describe('no tracker or internal-document references', () => {
  it('the pattern catches what it is meant to (and not ordinary words)', () => {
    expect(references('x', 'a\n(issue 14)\nsee issues #3\nCONTRACT "Serving"\nstop 35\nIssue 17: x')).toHaveLength(5);
    expect(references('x', 'an issue with it\nstop the server\ncontract')).toEqual([]);
  });

  it('in no file under src/ (comments included)', () => {
    const files = filesUnder(SRC);
    expect(files.length).toBeGreaterThan(50);
    expect(files.flatMap((f) => references(f.slice(SRC.length - 4), readFileSync(f, 'utf8')))).toEqual([]);
  });

  it('in no --help of the binary, the top-level one included', async () => {
    const found: string[] = [];
    const all = [['--help'], ...Object.keys(COMMANDS).map((c) => [c, '--help'])];
    // Four at a time: 21 processes one after another took over a minute on a busy 2-core machine.
    for (let i = 0; i < all.length; i += 4) {
      const batch = all.slice(i, i + 4);
      const results = await Promise.all(batch.map((args) => airlockAsync(args, { timeoutMs: 60_000 })));
      results.forEach((r, j) => {
        const args = batch[j]!;
        expect(r.status, args.join(' ')).toBe(0);
        expect(r.stdout.length, args.join(' ')).toBeGreaterThan(100);
        found.push(...references(`airlock ${args.join(' ')}`, r.stdout + r.stderr));
      });
    }
    expect(found).toEqual([]);
  }, 180_000);

  it('serve --enable of an unavailable feature points at serve --help, not at a document', () => {
    const r = airlock(['serve', '--enable', 'search', '--store', '/nonexistent-airlock-store']);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('search is unavailable in air-gapped deployments; see the deployment matrix (airlock serve --help)');
    expect(r.stderr).toMatch(/\[AIRLOCK_FEATURE_UNAVAILABLE\]/);
    expect(references('stderr', r.stderr)).toEqual([]);
  });
});
