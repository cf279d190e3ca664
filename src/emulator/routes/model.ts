import { Hono } from 'hono';
import { stream } from 'hono/streaming';
import { z } from 'zod';
import { requestJson } from '../../util/json-body.js';

/**
 * A stand-in for an organisation's own language model: an OpenAI-compatible chat API
 * (`POST /v1/chat/completions`, `stream: true`) whose answers are deterministic and built from the
 * numbered sections quoted in its system message (the shape src/assistant/prompt.ts writes). It
 * names every section it was given, so tests can assert what was retrieved, and counts the
 * conversation's earlier turns, so they can assert a thread continued. `airlock demo` and tests
 * point `serve --assistant-model` here; no model needs to be installed.
 */
const Body = z.looseObject({
  model: z.string().min(1),
  stream: z.literal(true),
  messages: z.array(z.looseObject({ role: z.enum(['system', 'user', 'assistant']), content: z.string() })).min(1),
});

export interface StandInSection {
  n: number;
  title: string;
  path: string;
  text: string;
}

/** The sections quoted in a system message: `[n] Title — /path` then its text. */
export function quotedSections(system: string): StandInSection[] {
  const out: StandInSection[] = [];
  const re = /^\[(\d+)\] (.*) — (\/\S*)\n(.*)$/gm;
  for (const m of system.matchAll(re)) out.push({ n: Number(m[1]), title: m[2]!, path: m[3]!, text: m[4]! });
  return out;
}

/** The stand-in's answer to a conversation (pure). */
export function standInAnswer(messages: ReadonlyArray<{ role: string; content: string }>): string {
  const sections = quotedSections(messages.find((m) => m.role === 'system')?.content ?? '');
  const earlier = messages.filter((m) => m.role === 'assistant').length;
  const lead = earlier > 0 ? `Following up (turn ${earlier + 1}): ` : '';
  if (sections.length === 0) return `${lead}The documentation I was given does not answer that.`;
  const best = sections[0]!;
  const sentence = /^(.{1,300}?[.!?])(\s|$)/.exec(best.text)?.[1] ?? best.text.slice(0, 300);
  return `${lead}According to [${best.n}] ${best.title}: ${sentence} I was given ${sections.map((s) => `[${s.n}] ${s.path}`).join(', ')}.`;
}

export function modelRoutes(): Hono {
  const app = new Hono();
  app.post('/chat/completions', async (c) => {
    const got = await requestJson(c.req.raw);
    if (!got.ok) return c.json({ error: { message: got.error } }, 400);
    const v = Body.safeParse(got.value);
    if (!v.success) return c.json({ error: { message: 'expected {model, messages: [{role, content}], stream: true}' } }, 400);
    const words = standInAnswer(v.data.messages).split(' ');
    const id = `chatcmpl-standin`;
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', model: v.data.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    c.header('Content-Type', 'text/event-stream');
    c.header('Cache-Control', 'no-store');
    return stream(c, async (s) => {
      await s.write(chunk({ role: 'assistant', content: '' }));
      for (const [i, w] of words.entries()) await s.write(chunk({ content: i === 0 ? w : ` ${w}` }));
      await s.write(chunk({}, 'stop'));
      await s.write('data: [DONE]\n\n');
    });
  });
  return app;
}
