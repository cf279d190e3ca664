import { z } from 'zod';

/**
 * `POST /discovery/v2/assistant/{domain}/message` request body: AI SDK v5 UI messages
 * plus the service's retrieval options. Parts are discriminated by `type`; only the part types the
 * service documents are accepted. Objects are loose so newer fields pass through.
 */
const TextPart = z.looseObject({ type: z.literal('text'), text: z.string(), state: z.enum(['streaming', 'done']).optional() });
const ReasoningPart = z.looseObject({ type: z.literal('reasoning'), text: z.string(), state: z.enum(['streaming', 'done']).optional() });
const SourceUrlPart = z.looseObject({ type: z.literal('source-url'), sourceId: z.string(), url: z.string(), title: z.string().optional() });
const FilePart = z.looseObject({ type: z.literal('file'), mediaType: z.string(), url: z.string(), filename: z.string().optional() });
const StepStartPart = z.looseObject({ type: z.literal('step-start') });

export const UiMessagePartSchema = z.discriminatedUnion('type', [TextPart, ReasoningPart, SourceUrlPart, FilePart, StepStartPart]);
export type UiMessagePart = z.infer<typeof UiMessagePartSchema>;

export const UiMessageSchema = z.looseObject({
  id: z.string(),
  role: z.enum(['system', 'user', 'assistant']),
  parts: z.array(UiMessagePartSchema),
  metadata: z.unknown().optional(),
});
export type UiMessage = z.infer<typeof UiMessageSchema>;

export const AssistantContextSchema = z.looseObject({
  type: z.enum(['code', 'textSelection']),
  value: z.string(),
  path: z.string().optional(),
  elementId: z.string().optional(),
});

export const AssistantRequestSchema = z.looseObject({
  fp: z.string().min(1),
  messages: z.array(UiMessageSchema).min(1),
  threadId: z.string().min(1).optional(),
  retrievalPageSize: z.number().int().min(1).max(50).default(5),
  filter: z.looseObject({ version: z.string().optional(), language: z.string().optional(), groups: z.array(z.string()).optional() }).optional(),
  context: z.array(AssistantContextSchema).optional(),
  currentPath: z.string().max(200).optional(),
});
/** What a caller writes (defaults optional) and what the service sees after parsing. */
export type AssistantRequest = z.input<typeof AssistantRequestSchema>;
export type ParsedAssistantRequest = z.output<typeof AssistantRequestSchema>;

/** The question a request asks: the text parts of its last user message. */
export function question(req: ParsedAssistantRequest): string {
  const last = [...req.messages].reverse().find((m) => m.role === 'user');
  return (last?.parts ?? [])
    .map((p) => (p.type === 'text' ? p.text : ''))
    .join(' ')
    .trim();
}
