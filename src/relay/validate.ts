import { z } from 'zod';
import { AssistantRequestSchema } from '../upstream/schemas/assistant.js';
import { describeIssue, describeIssues } from '../upstream/describe.js';

export interface Problem {
  path: string;
  message: string;
}

export type Validated<T> = { ok: true; value: T } | { ok: false; error: string; problems: Problem[] };

/** At most this many problems are listed (a hostile body can have thousands). */
const MAX_PROBLEMS = 20;

/** Each schema problem with its path, in words (never the library's wording), as the 400 body lists them. */
export function problemsOf(err: z.ZodError): Problem[] {
  return err.issues.slice(0, MAX_PROBLEMS).map((i) => ({ path: i.path.map(String).join('.'), message: describeIssue(i) }));
}

function check<T>(schema: z.ZodType<T>, value: unknown, what: string): Validated<T> {
  const r = schema.safeParse(value);
  if (r.success) return { ok: true, value: r.data };
  const problems = problemsOf(r.error);
  const list = describeIssues(r.error.issues, 10).join('; ');
  return { ok: false, error: `invalid ${what} request: ${list}`, problems };
}

/** The assistant body, with the service's own schema (src/upstream): the relay never widens it. */
export function validateAssistant(value: unknown): Validated<z.output<typeof AssistantRequestSchema>> {
  return check(AssistantRequestSchema, value, 'assistant');
}

/**
 * The search call as the service's export sends it (POST `{query, pageSize}` or GET `?q=`).
 * Bounded lengths: the relay forwards nothing the schema does not describe beyond loose fields.
 */
export const SearchBodySchema = z.looseObject({
  query: z.string().min(1).max(1000),
  pageSize: z.number().int().min(1).max(50).optional(),
});
export const SearchQuerySchema = z.strictObject({
  q: z.string().min(1).max(1000),
  pageSize: z
    .string()
    .regex(/^\d{1,2}$/)
    .optional(),
});

export function validateSearchBody(value: unknown): Validated<z.output<typeof SearchBodySchema>> {
  return check(SearchBodySchema, value, 'search');
}

export function validateSearchQuery(value: Record<string, string>): Validated<z.output<typeof SearchQuerySchema>> {
  return check(SearchQuerySchema, value, 'search');
}
