import { z } from 'zod';

/** Every error answer of the service is JSON `{error: string}`; anything else in it passes. */
export const ErrorBodySchema = z.looseObject({ error: z.string() });
export type ErrorBody = z.infer<typeof ErrorBodySchema>;
