import { randomBytes } from 'node:crypto';
import { question, type ParsedAssistantRequest, type UiMessageChunk } from '../upstream/index.js';
import { rank, type Page } from './text.js';

/**
 * The AI SDK v5 UI message stream chunks of an answer drawn from the fixture site: source-url
 * parts for the most relevant pages (up to retrievalPageSize), then the best page's text as
 * word-by-word text deltas, ending with `finish` carrying the thread id. Pure but for ids.
 */
export function answerChunks(req: ParsedAssistantRequest, pages: Page[], domain: string): UiMessageChunk[] {
  const hits = rank(pages, question(req), req.retrievalPageSize);
  const threadId = req.threadId ?? `thr_${randomBytes(8).toString('hex')}`;
  const textId = `txt_${randomBytes(4).toString('hex')}`;
  const best = hits[0];
  const text = best ? `According to "${best.page.title}": ${best.snippet}` : `I could not find anything about that in the ${domain} documentation.`;
  const words = text.split(' ');
  return [
    { type: 'start', messageId: `msg_${randomBytes(8).toString('hex')}` },
    { type: 'start-step' },
    ...hits.map((h, i) => ({ type: 'source-url', sourceId: `src_${i + 1}`, url: h.page.url, title: h.page.title })),
    { type: 'text-start', id: textId },
    ...words.map((w, i) => ({ type: 'text-delta', id: textId, delta: i === 0 ? w : ` ${w}` })),
    { type: 'text-end', id: textId },
    { type: 'finish-step' },
    { type: 'finish', messageMetadata: { threadId } },
  ];
}
