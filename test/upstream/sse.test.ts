import { describe, expect, it } from 'vitest';
import { SseParser, sseData } from '../../src/upstream/sse.js';

function feedAll(parts: (string | Uint8Array)[]): string[] {
  const p = new SseParser();
  return parts.flatMap((x) => p.push(x));
}

async function* chunks(parts: (string | Uint8Array)[]) {
  for (const x of parts) yield typeof x === 'string' ? new TextEncoder().encode(x) : x;
}

const STREAM = 'data: {"type":"start"}\n\n: keep-alive comment\n\ndata: {"type":"text-delta","delta":"héllo"}\n\ndata: [DONE]\n\n';

describe('SseParser', () => {
  it('parses whole events', () => {
    expect(feedAll([STREAM])).toEqual(['{"type":"start"}', '{"type":"text-delta","delta":"héllo"}', '[DONE]']);
  });

  it('gives the same payloads for every split point of the byte stream, including inside a UTF-8 character', () => {
    const bytes = new TextEncoder().encode(STREAM);
    const whole = feedAll([bytes]);
    for (let i = 1; i < bytes.length; i++) {
      expect(feedAll([bytes.subarray(0, i), bytes.subarray(i)]), `split at ${i}`).toEqual(whole);
    }
  });

  it('handles one byte at a time', () => {
    const bytes = new TextEncoder().encode(STREAM);
    expect(feedAll([...bytes].map((b) => Uint8Array.of(b)))).toEqual(feedAll([bytes]));
  });

  it('accepts CRLF and lone CR line endings, with CRLF split across chunks', () => {
    expect(feedAll(['data: a\r', '\n\r', '\ndata: b\r\rdata: c\n\n'])).toEqual(['a', 'b', 'c']);
  });

  it('joins multi-line data with \\n and strips only one leading space', () => {
    expect(feedAll(['data: one\ndata:  two\ndata\nevent: x\nid: 7\n\n'])).toEqual(['one\n two\n']);
  });

  it('ignores comments and blank events', () => {
    expect(feedAll([': hi\n\n\n\n:data: no\n\n'])).toEqual([]);
  });

  it('drops an event that is not terminated by a blank line at end of stream', async () => {
    const out: string[] = [];
    for await (const d of sseData(chunks(['data: a\n\ndata: b']))) out.push(d);
    expect(out).toEqual(['a']);
  });

  it('sseData stops at [DONE] and ignores what follows', async () => {
    const out: string[] = [];
    for await (const d of sseData(chunks(['data: 1\n\nda', 'ta: [DONE]\n\ndata: 2\n\n']))) out.push(d);
    expect(out).toEqual(['1']);
  });
});
