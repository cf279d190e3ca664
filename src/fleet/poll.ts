import { UpstreamError } from '../errors.js';
import { cappedText } from '../util/capped-body.js';
import { ErrorBodySchema, netError, sanitize } from '../upstream/index.js';
import { FleetAnswerSchema, FLEET_POLL_PATH, type FleetAnswer, type FleetReport } from '../mirror/index.js';
import { describeZodError } from '../upstream/index.js';
import { timeoutSignal } from '../util/timeout-signal.js';

/** The mirror's answer is small; a bigger one is a hostile or broken mirror. */
const MAX_ANSWER_BYTES = 64 * 1024;
export const REQUEST_TIMEOUT_MS = 5_000;

/**
 * One poll of the mirror's fleet endpoint: POST this replica's report, read at most
 * MAX_ANSWER_BYTES within REQUEST_TIMEOUT_MS, and return the answer only if it has the schema's
 * shape. Anything else throws an AIRLOCK_MIRROR_UNREACHABLE error naming what was wrong in plain
 * words (the network failure, status, size, not JSON, which field), never the body's bytes.
 */
export async function pollMirror(base: string, token: string, report: FleetReport, signal: AbortSignal): Promise<FleetAnswer> {
  const url = base + FLEET_POLL_PATH;
  const fail = (why: string, status?: number) => new UpstreamError(why, status, { subject: url }, 'AIRLOCK_MIRROR_UNREACHABLE');
  let res: Response;
  let text: string;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify(report),
      signal: AbortSignal.any([signal, timeoutSignal(REQUEST_TIMEOUT_MS)]),
    });
    text = await boundedText(res, MAX_ANSWER_BYTES);
  } catch (err) {
    if (signal.aborted || err instanceof UpstreamError) throw err;
    throw fail(netError(err, { url, timeoutMs: REQUEST_TIMEOUT_MS }).message);
  }
  if (!res.ok) {
    let detail = '';
    try {
      const e = ErrorBodySchema.safeParse(JSON.parse(text));
      if (e.success) detail = `: ${sanitize(e.data.error, 200)}`;
    } catch {
      // not the mirror's {error}: its bytes are not echoed
    }
    throw fail(`HTTP ${res.status} from ${url}${detail}`, res.status);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw fail(`the mirror's fleet answer is not JSON (${Buffer.byteLength(text)} bytes)`);
  }
  const a = FleetAnswerSchema.safeParse(json);
  if (!a.success) throw fail(`the mirror's fleet answer is malformed: ${sanitize(describeZodError(a.error, 3))}`);
  return a.data;
}

/** The body as text, refusing more than `max` bytes. */
async function boundedText(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await res.body?.cancel();
    throw new UpstreamError(`the mirror's answer is ${declared} bytes; at most ${max} are read`, res.status, {}, 'AIRLOCK_MIRROR_UNREACHABLE');
  }
  const text = await cappedText(res.body, max);
  if (text === null) throw new UpstreamError(`the mirror's answer is over ${max} bytes`, res.status, {}, 'AIRLOCK_MIRROR_UNREACHABLE');
  return text;
}
