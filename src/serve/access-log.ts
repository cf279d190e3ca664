import type { IncomingMessage, ServerResponse } from 'node:http';
import { escapeJson } from '../util/terminal.js';

/**
 * One JSON line per request (off by default: it costs a listener and a write per request).
 * The path is logged as received, JSON-escaped, so hostile bytes cannot forge log lines.
 */
export type AccessLog = (req: IncomingMessage, res: ServerResponse, version: string) => void;

export function accessLogger(out: NodeJS.WritableStream): AccessLog {
  return (req, res, version) => {
    const t0 = process.hrtime.bigint();
    const sent0 = req.socket.bytesWritten;
    res.once('finish', () => {
      const line = {
        time: new Date().toISOString(),
        method: req.method,
        path: (req.url ?? '').slice(0, 2048),
        status: res.statusCode,
        // Bytes on the wire (headers included): headers given to writeHead as a list are not readable back.
        bytes: req.socket.bytesWritten - sent0,
        ms: Number(process.hrtime.bigint() - t0) / 1e6,
        version,
        remote: req.socket.remoteAddress ?? null,
      };
      out.write(escapeJson(JSON.stringify(line)) + '\n'); // C1/bidi bytes of a path as \u escapes too
    });
  };
}
