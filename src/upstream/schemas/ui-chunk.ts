import { z } from 'zod';

/**
 * The AI SDK v5 UI message stream (`x-vercel-ai-ui-message-stream: v1`): one JSON chunk per SSE
 * `data:` line. Known chunk types are validated field by field; chunk types this client does not
 * model (tool-*, data-*, later additions) pass as `{type, ...}` so a newer service does not break
 * an older airlock — but a known type with a wrong shape is still an error.
 */
const id = z.string();
const Start = z.looseObject({ type: z.literal('start'), messageId: z.string().optional(), messageMetadata: z.unknown().optional() });
const StartStep = z.looseObject({ type: z.literal('start-step') });
const TextStart = z.looseObject({ type: z.literal('text-start'), id });
const TextDelta = z.looseObject({ type: z.literal('text-delta'), id, delta: z.string() });
const TextEnd = z.looseObject({ type: z.literal('text-end'), id });
const ReasoningStart = z.looseObject({ type: z.literal('reasoning-start'), id });
const ReasoningDelta = z.looseObject({ type: z.literal('reasoning-delta'), id, delta: z.string() });
const ReasoningEnd = z.looseObject({ type: z.literal('reasoning-end'), id });
const SourceUrl = z.looseObject({ type: z.literal('source-url'), sourceId: z.string(), url: z.string(), title: z.string().optional() });
const FinishStep = z.looseObject({ type: z.literal('finish-step') });
/** The service puts the conversation's `threadId` on `finish` (in messageMetadata, or top level). */
const Finish = z.looseObject({
  type: z.literal('finish'),
  threadId: z.string().optional(),
  messageMetadata: z.looseObject({ threadId: z.string().optional() }).optional(),
});
const ErrorChunk = z.looseObject({ type: z.literal('error'), errorText: z.string() });

const KnownChunkSchema = z.discriminatedUnion('type', [
  Start,
  StartStep,
  TextStart,
  TextDelta,
  TextEnd,
  ReasoningStart,
  ReasoningDelta,
  ReasoningEnd,
  SourceUrl,
  FinishStep,
  Finish,
  ErrorChunk,
]);
const KNOWN = new Set([
  'start',
  'start-step',
  'text-start',
  'text-delta',
  'text-end',
  'reasoning-start',
  'reasoning-delta',
  'reasoning-end',
  'source-url',
  'finish-step',
  'finish',
  'error',
]);
const OtherChunk = z.looseObject({ type: z.string().min(1) });

/**
 * Dispatch on `type` by hand instead of a z.union: a malformed known chunk then reports its own
 * field ("delta: expected string"), not an opaque "no union member matched".
 */
export const UiMessageChunkSchema = z.unknown().transform((v, ctx): UiMessageChunk => {
  const type = (v as { type?: unknown } | null)?.type;
  const schema = typeof type === 'string' && KNOWN.has(type) ? KnownChunkSchema : OtherChunk;
  const r = schema.safeParse(v);
  if (r.success) return r.data as UiMessageChunk;
  for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
  return z.NEVER;
});
export type KnownUiMessageChunk = z.infer<typeof KnownChunkSchema>;
export type UiMessageChunk = KnownUiMessageChunk | { type: string; [k: string]: unknown };

export function isKnownChunk(c: UiMessageChunk): c is KnownUiMessageChunk {
  return KNOWN.has(c.type);
}

/** The thread id a `finish` chunk carries, wherever the service put it. */
export function finishThreadId(c: UiMessageChunk): string | undefined {
  if (c.type !== 'finish') return undefined;
  const f = c as z.infer<typeof Finish>;
  return f.threadId ?? f.messageMetadata?.threadId;
}
