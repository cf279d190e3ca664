/**
 * Server-sent events, the part the UI message stream uses (WHATWG HTML §9.2.6 "Interpreting an
 * event stream"): lines end in CRLF, LF or CR; `data:` lines of one event join with "\n"; an empty
 * line dispatches; lines starting with ":" are comments; other fields (event, id, retry) are
 * ignored. Bytes arrive in arbitrary chunks, so a line — even a multi-byte character — may be split.
 */
export class SseParser {
  private buf = '';
  private data: string[] = [];
  private readonly decoder = new TextDecoder('utf-8');
  /** A CR ended the last chunk: a following LF belongs to it (CRLF split across chunks). */
  private pendingCr = false;

  /** Feed bytes; returns the data payloads of the events completed by them. */
  push(chunk: Uint8Array | string): string[] {
    let text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (this.pendingCr && text.startsWith('\n')) text = text.slice(1);
    this.pendingCr = false;
    this.buf += text;
    const out: string[] = [];
    for (;;) {
      const m = /\r\n|\r|\n/.exec(this.buf);
      if (!m) break;
      // A lone CR at the very end may be the first half of a CRLF still in flight.
      if (m[0] === '\r' && m.index === this.buf.length - 1) this.pendingCr = true;
      const line = this.buf.slice(0, m.index);
      this.buf = this.buf.slice(m.index + m[0].length);
      const payload = this.line(line);
      if (payload !== undefined) out.push(payload);
    }
    return out;
  }

  /** Characters held for an event not complete yet (its lines, and a line not ended yet). */
  get pending(): number {
    return this.buf.length + this.data.reduce((n, d) => n + d.length, 0);
  }

  /** End of stream: an event not followed by a blank line is discarded (per the spec). */
  end(): string[] {
    this.buf += this.decoder.decode();
    this.buf = '';
    this.data = [];
    return [];
  }

  private line(line: string): string | undefined {
    if (line === '') {
      if (this.data.length === 0) return undefined;
      const payload = this.data.join('\n');
      this.data = [];
      return payload;
    }
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'data') this.data.push(value);
    return undefined;
  }
}

/** Data payloads of an SSE byte stream, in order, until `[DONE]` or the end of the stream. */
export async function* sseData(body: AsyncIterable<Uint8Array | string>, o: { maxEventBytes?: number } = {}): AsyncGenerator<string> {
  const parser = new SseParser();
  for await (const chunk of body) {
    const events = parser.push(chunk);
    if (o.maxEventBytes !== undefined && parser.pending > o.maxEventBytes) throw new Error(`an event longer than ${o.maxEventBytes} bytes`);
    for (const payload of events) {
      if (payload === '[DONE]') return;
      yield payload;
    }
  }
  parser.end();
}
