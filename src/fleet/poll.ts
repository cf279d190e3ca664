import { cappedText } from '../util/capped-body.js';
import { FleetAnswerSchema, FLEET_POLL_PATH, type FleetAnswer, type FleetReport } from '../mirror/index.js';

/** The mirror's answer is small; a bigger one is a hostile or broken mirror. */
const MAX_ANSWER_BYTES = 64 * 1024;
export const REQUEST_TIMEOUT_MS = 5_000;

/**
 * One poll of the mirror's fleet endpoint: POST this replica's report, read at most
 * MAX_ANSWER_BYTES within REQUEST_TIMEOUT_MS, and return the answer only if it has the schema's
 * shape. Anything else throws an Error naming what was wrong (status, size, not JSON, which field).
 */
export async function pollMirror(base: string, token: string, report: FleetReport, signal: AbortSignal): Promise<FleetAnswer> {
  const res = await fetch(base + FLEET_POLL_PATH, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(report),
    signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
  });
  const text = await boundedText(res, MAX_ANSWER_BYTES);
  if (!res.ok) throw new Error(`HTTP ${res.status} from ${base}${FLEET_POLL_PATH}: ${text.slice(0, 200)}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`the mirror's fleet answer is not JSON`);
  }
  const a = FleetAnswerSchema.safeParse(json);
  if (!a.success) throw new Error(`the mirror's fleet answer is malformed: ${a.error.issues.slice(0, 3).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return a.data;
}

/** The body as text, refusing more than `max` bytes. */
async function boundedText(res: Response, max: number): Promise<string> {
  const declared = Number(res.headers.get('content-length') ?? NaN);
  if (declared > max) {
    await res.body?.cancel();
    throw new Error(`the mirror's answer is ${declared} bytes; at most ${max} are read`);
  }
  const text = await cappedText(res.body, max);
  if (text === null) throw new Error(`the mirror's answer is over ${max} bytes`);
  return text;
}
