/**
 * A web body (Request or Response) as UTF-8 text, or null as soon as it passes `max` bytes (the
 * stream is then cancelled): a chunked or lying peer cannot make us buffer more than the cap.
 * Callers check a declared Content-Length first, with their own refusal.
 */
export async function cappedText(body: ReadableStream<Uint8Array> | null, max: number): Promise<string | null> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (body) {
    const reader = body.getReader();
    for (;;) {
      const r = await reader.read();
      if (r.done) break;
      size += r.value.byteLength;
      if (size > max) {
        await reader.cancel().catch(() => {});
        return null;
      }
      chunks.push(r.value);
    }
  }
  return Buffer.concat(chunks).toString('utf8');
}
