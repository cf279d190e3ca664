import type { z } from 'zod';

/** "jobId: Invalid input: expected string, received undefined; progress: ..." — names every field at fault. */
export function describeZodError(err: z.ZodError, max = 10): string {
  const parts = err.issues.slice(0, max).map((i) => `${i.path.length ? i.path.map(String).join('.') : '(root)'}: ${i.message}`);
  if (err.issues.length > max) parts.push(`... and ${err.issues.length - max} more`);
  return parts.join('; ');
}
