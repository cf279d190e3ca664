import { dirname, isAbsolute, resolve } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import type { z } from 'zod';
import { AirlockError, UsageError } from '../errors.js';
import { escapeControls } from '../util/terminal.js';
import { checkFlowDepth, checkStructure, readBounded } from './bounds.js';
import { valuesSchema, type Values } from './schema.js';
import { describeIssue } from '../upstream/describe.js';

export interface LoadedValues {
  values: Values;
  warnings: string[];
  file: string;
}

const keyPath = (p: readonly PropertyKey[]): string => p.map(String).join('.') || '(top level)';
/** Problems listed one per line at most (200,000 unknown keys must not make 200,000 lines). */
const MAX_LISTED = 20;

/**
 * Check parsed YAML (pure): wrong types are a UsageError (exit 2) naming every bad key path;
 * unknown keys are warnings naming each one (a typo should be seen, a newer chart's key should
 * not stop the server).
 */
export function checkValues(doc: unknown, file: string): { values: Values; warnings: string[] } {
  const input = doc ?? {}; // an empty file is an empty values file
  const strict = valuesSchema(true).safeParse(input);
  const issues: z.core.$ZodIssue[] = strict.success ? [] : strict.error.issues;
  const unknown = issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys.map((k) => `${file}: unknown key ${keyPath([...i.path, k])} (ignored)`) : []));
  const warnings =
    unknown.length <= MAX_LISTED ? unknown : [...unknown.slice(0, MAX_LISTED), `${file}: ... and ${unknown.length - MAX_LISTED} more unknown keys (ignored)`];
  const errors = issues.filter((i) => i.code !== 'unrecognized_keys');
  if (errors.length > 0) {
    const first = keyPath(errors[0]!.path);
    const lines = [...new Set(errors.map((i) => `  ${located(input, i.path)}: ${describeIssue(i)}`))].slice(0, MAX_LISTED);
    if (errors.length > MAX_LISTED) lines.push(`  ... and ${errors.length - MAX_LISTED} more`);
    throw new UsageError(
      `invalid values file ${file}:\n${lines.join('\n')}`,
      { subject: first, keys: errors.slice(0, MAX_LISTED).map((i) => keyPath(i.path)) },
      'AIRLOCK_BAD_VALUES',
    );
  }
  const loose = valuesSchema(false).parse(input);
  return { values: loose, warnings };
}

/** A key's path as the user finds it: a library site's also named by its domain (`library.sites.0 (docs.example).staticExport.bundleUrl`). */
function located(input: unknown, path: readonly PropertyKey[]): string {
  const text = keyPath(path);
  const n = path[2];
  if (path[0] !== 'library' || path[1] !== 'sites' || typeof n !== 'number') return text;
  const sites = (input as { library?: { sites?: unknown } }).library?.sites;
  const domain = Array.isArray(sites) ? (sites[n] as { domain?: unknown } | undefined)?.domain : undefined;
  return typeof domain === 'string' ? text.replace(`library.sites.${n}`, `library.sites.${n} (${escapeControls(domain.slice(0, 253))})`) : text;
}

/** Paths in a values file are relative to the file's folder (as a chart's files are to the chart). */
function anchor(v: Values, dir: string): Values {
  const abs = (p: string | undefined) => (p === undefined || isAbsolute(p) ? p : resolve(dir, p));
  return {
    ...v,
    store: abs(v.store),
    staticExport: v.staticExport && { ...v.staticExport, trust: v.staticExport.trust?.map((p) => abs(p)!) },
    mirror: v.mirror && { ...v.mirror, tokensFile: abs(v.mirror.tokensFile), secretFile: abs(v.mirror.secretFile) },
    follow: v.follow && { ...v.follow, tokenFile: abs(v.follow.tokenFile), trust: v.follow.trust?.map((p) => abs(p)!) },
    library: v.library && {
      ...v.library,
      sites: v.library.sites?.map((s) => ({ ...s, staticExport: s.staticExport && { ...s.staticExport, trust: s.staticExport.trust?.map((p) => abs(p)!) } })),
    },
  };
}

export async function loadValues(file: string): Promise<LoadedValues> {
  const text = await readBounded(file);
  checkFlowDepth(text, file);
  const lines = new LineCounter();
  let js: unknown;
  try {
    // uniqueKeys off: checkStructure finds duplicates in one pass (the library's check is quadratic).
    // merge: YAML merge keys (`<<: *defaults`) are merged as Helm's parser merges them.
    const doc = parseDocument(text, { uniqueKeys: false, prettyErrors: true, lineCounter: lines, merge: true });
    if (doc.errors.length > 0) {
      const e = doc.errors[0]!;
      const where = e.linePos?.[0] ? `${file}:${e.linePos[0].line}:${e.linePos[0].col}` : file;
      if (e.code === 'MULTIPLE_DOCS') {
        const line = e.linePos?.[0]?.line;
        throw new UsageError(
          `values file ${file} holds more than one YAML document${line ? `; the second starts at line ${line}` : ''}: give one document (a values file is one mapping)`,
          { subject: where },
          'AIRLOCK_BAD_VALUES',
        );
      }
      throw new UsageError(`values file ${where} is not valid YAML: ${e.message.split('\n')[0]}`, { subject: where }, 'AIRLOCK_BAD_VALUES');
    }
    // Aliases counted and their expansion capped (VALUES_LIMITS.aliasExpansion) before any JS object is built.
    checkStructure(doc, file, lines);
    // -1: the library's own count is off; checkStructure's bounds it, in linear time (the library's is not).
    js = doc.toJS({ maxAliasCount: -1 });
  } catch (err) {
    if (err instanceof AirlockError) throw err;
    // Anything else the yaml library throws: the file is at fault.
    const why = `it cannot be read as YAML: ${escapeControls(err instanceof Error ? err.message.split('\n')[0]! : String(err))}`;
    throw new UsageError(`values file ${file} refused: ${why}`, { subject: file }, 'AIRLOCK_BAD_VALUES');
  }
  const { values, warnings } = checkValues(js, file);
  return { values: anchor(values, dirname(resolve(file))), warnings, file };
}
