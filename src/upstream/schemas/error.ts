import { z } from 'zod';

/** Every error answer of the service is JSON `{error}` (issue 4). */
export const ErrorBodySchema = z.looseObject({ error: z.string() });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
