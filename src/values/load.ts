import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import type { z } from 'zod';
import { UsageError } from '../errors.js';
import { valuesSchema, type Values } from './schema.js';

export interface LoadedValues { values: Values; warnings: string[]; file: string }

const keyPath = (p: readonly PropertyKey[]): string => p.map(String).join('.') || '(top level)';

/**
 * Check parsed YAML (pure): wrong types are a UsageError (exit 2) naming every bad key path;
 * unknown keys are warnings naming each one (a typo should be seen, a newer chart's key should
 * not stop the server).
 */
export function checkValues(doc: unknown, file: string): { values: Values; warnings: string[] } {
  const input = doc ?? {}; // an empty file is an empty values file
  const strict = valuesSchema(true).safeParse(input);
  const issues: z.core.$ZodIssue[] = strict.success ? [] : strict.error.issues;
  const warnings = issues.flatMap((i) => (i.code === 'unrecognized_keys' ? i.keys.map((k) => `${file}: unknown key ${keyPath([...i.path, k])} (ignored)`) : []));
  const errors = issues.filter((i) => i.code !== 'unrecognized_keys');
  if (errors.length > 0) {
    const first = keyPath(errors[0]!.path);
    const lines = errors.map((i) => `  ${keyPath(i.path)}: ${i.message}`);
    throw new UsageError(`invalid values file ${file}:\n${lines.join('\n')}`, { subject: first, keys: errors.map((i) => keyPath(i.path)) }, 'AIRLOCK_BAD_VALUES');
  }
  const loose = valuesSchema(false).parse(input);
  return { values: loose, warnings };
}

/** Paths in a values file are relative to the file's folder (as a chart's files are to the chart). */
function anchor(v: Values, dir: string): Values {
  const abs = (p: string | undefined) => (p === undefined || isAbsolute(p) ? p : resolve(dir, p));
  return {
    ...v,
    store: abs(v.store),
    staticExport: v.staticExport && { ...v.staticExport, trust: v.staticExport.trust?.map((p) => abs(p)!) },
    mirror: v.mirror && { ...v.mirror, tokensFile: abs(v.mirror.tokensFile), secretFile: abs(v.mirror.secretFile) },
  };
}

export async function loadValues(file: string): Promise<LoadedValues> {
  const text = await readFile(file, 'utf8').catch((err: NodeJS.ErrnoException) => {
    throw new UsageError(`cannot read values file ${file}: ${err.code ?? err.message}`, { subject: file }, 'AIRLOCK_BAD_VALUES');
  });
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (doc.errors.length > 0) {
    const e = doc.errors[0]!;
    const where = e.linePos?.[0] ? `${file}:${e.linePos[0].line}:${e.linePos[0].col}` : file;
    throw new UsageError(`values file ${where} is not valid YAML: ${e.message.split('\n')[0]}`, { subject: where }, 'AIRLOCK_BAD_VALUES');
  }
  const { values, warnings } = checkValues(doc.toJS(), file);
  return { values: anchor(values, dirname(resolve(file))), warnings, file };
}
