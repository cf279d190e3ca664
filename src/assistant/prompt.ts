import type { ChatMessage } from './model.js';
import { plainText } from '../util/terminal.js';

/**
 * The prompt the model is given (pure): the sections retrieved from the served version's local
 * search, numbered and quoted with their titles and paths, then the conversation so far and the
 * reader's question (with what they selected on the page). Bounded: the sections share
 * `maxChars`, each cut to an equal share first; earlier turns beyond `maxTurns` are dropped.
 */
export interface Section {
  /** `/guide/install#linux`: a page of this origin, with the section's anchor. */
  path: string;
  title: string;
  heading: string;
  text: string;
}

export interface Turn {
  question: string;
  answer: string;
}

export interface PromptInput {
  domain: string;
  sections: readonly Section[];
  history: readonly Turn[];
  question: string;
  /** What the reader selected or pointed at on the page (`context`), quoted after the question. */
  context: ReadonlyArray<{ type: 'code' | 'textSelection'; value: string; path?: string }>;
  currentPath?: string;
}

export const PROMPT_LIMITS = { maxChars: 24_000, maxTurns: 6, maxTurnChars: 4_000, maxContextChars: 4_000 };

/** One quoted section as the model reads it; the stand-in model parses this very shape (emulator/model.ts). */
export const sectionHeader = (n: number, s: Section): string =>
  `[${n}] ${s.heading && s.heading !== s.title ? `${s.title}: ${s.heading}` : s.title} — ${s.path}`;

export function buildPrompt(p: PromptInput, limits = PROMPT_LIMITS): ChatMessage[] {
  const share = Math.floor(limits.maxChars / Math.max(1, p.sections.length));
  const quoted = p.sections.map((s, i) => `${sectionHeader(i + 1, s)}\n${cut(oneLine(s.text), share)}`).join('\n\n');
  const system = [
    `You answer questions about the documentation of ${p.domain}, using only the numbered sections quoted below.`,
    'Cite each section you use by its number in brackets, like [1]. If the sections do not answer the question, say so plainly; do not guess.',
    'Answer in the language of the question, in short paragraphs or lists (Markdown).',
    // a page path only (no spaces, nothing else a reader could slip in as words for the model), quoted
    p.currentPath && /^\/[^\s]*$/u.test(plainText(p.currentPath)) ? `The reader is on the page ${JSON.stringify(plainText(p.currentPath))}.` : '',
    '',
    p.sections.length > 0 ? quoted : '(No section of the documentation matched the question.)',
  ]
    .filter((l, i) => l !== '' || i === 4)
    .join('\n');
  const turns = p.history.slice(-limits.maxTurns).flatMap((t): ChatMessage[] => [
    { role: 'user', content: cut(t.question, limits.maxTurnChars) },
    { role: 'assistant', content: cut(t.answer, limits.maxTurnChars) },
  ]);
  const selected = p.context.map((c) => `${c.type === 'code' ? 'Code' : 'Text'} the reader selected${c.path ? ` on ${c.path}` : ''}:\n${c.value}`).join('\n\n');
  const question = selected === '' ? p.question : `${p.question}\n\n${cut(selected, limits.maxContextChars)}`;
  return [{ role: 'system', content: system }, ...turns, { role: 'user', content: question }];
}

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();
const cut = (s: string, max: number) => (s.length <= max ? s : `${s.slice(0, Math.max(0, max - 1))}…`);
