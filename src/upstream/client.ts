import { setTimeout as sleep } from 'node:timers/promises';
import type { Dispatcher } from 'undici';
import { AirlockError, UpstreamError } from '../errors.js';
import { describeZodError } from './describe.js';
import { callJson, sanitize, send, type HttpOptions, type RetryInfo } from './http.js';
import { netError } from './net-error.js';
import { checkKeyType } from './keys.js';
import type { RetryPolicy } from './retry.js';
import { firstDuplicateKey } from '../util/json-text.js';
import { AGENT_JOB_FINAL, AgentJobSchema, type AgentJob } from './schemas/agent-job.js';
import { AssistantRequestSchema, type AssistantRequest } from './schemas/assistant.js';
import { BundleLinkSchema, type BundleLink } from './schemas/bundle.js';
import { CreatedExportJobSchema, ExportJobSchema, type ExportJob } from './schemas/export-job.js';
import { UiMessageChunkSchema, type UiMessageChunk } from './schemas/ui-chunk.js';
import { SseParser } from './sse.js';
import { timeoutSignal } from '../util/timeout-signal.js';

export interface ClientOptions {
  baseUrl: string;
  adminKey?: string;
  assistantKey?: string;
  timeoutMs?: number;
  retry?: RetryPolicy;
  dispatcher?: Dispatcher;
  onRetry?: (info: RetryInfo) => void;
  /** The command's stop: every call (its request and its waits between retries) ends on it with AIRLOCK_ABORTED. */
  signal?: AbortSignal;
}

const seg = encodeURIComponent;

/** The service's API. Every call checks the key type locally before touching the network. */
export class ServiceClient {
  private readonly http: HttpOptions;

  constructor(private readonly o: ClientOptions) {
    let url: URL;
    try {
      url = new URL(o.baseUrl);
    } catch {
      throw new AirlockError('AIRLOCK_USAGE', `invalid API URL ${JSON.stringify(o.baseUrl)}`, 2, { subject: 'api-url' });
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:')
      throw new AirlockError('AIRLOCK_USAGE', `API URL must be http(s): ${sanitize(JSON.stringify(o.baseUrl))}`, 2, { subject: 'api-url' });
    this.http = { baseUrl: o.baseUrl, timeoutMs: o.timeoutMs, retry: o.retry, dispatcher: o.dispatcher, onRetry: o.onRetry, signal: o.signal };
  }

  /** 202 with the whole job record (documented); only `jobId` is needed, a missing status reads as queued. */
  async startExport(domain: string): Promise<ExportJob> {
    const key = checkKeyType(this.o.adminKey, 'admin');
    const job = await callJson(this.http, { method: 'POST', path: '/v1/static-export/jobs', key, body: { domain } }, CreatedExportJobSchema);
    return { ...job, status: job.status ?? 'queued' };
  }

  /** The job; its id is the one asked for, whatever the answer says (or omits). */
  async getExport(jobId: string): Promise<ExportJob> {
    const key = checkKeyType(this.o.adminKey, 'admin');
    const job = await callJson(this.http, { method: 'GET', path: `/v1/static-export/jobs/${seg(jobId)}`, key }, ExportJobSchema);
    return { ...job, jobId };
  }

  /** A fresh presigned link on every call; 409 while the job is not finished. */
  async getBundle(jobId: string): Promise<BundleLink> {
    const key = checkKeyType(this.o.adminKey, 'admin');
    const path = `/v1/static-export/jobs/${seg(jobId)}/bundle`;
    return callJson(this.http, { method: 'POST', path, key, codes: { 409: 'AIRLOCK_NOT_READY' } }, BundleLinkSchema);
  }

  async getAgentJob(projectId: string, id: string, o: { signal?: AbortSignal } = {}): Promise<AgentJob> {
    const key = checkKeyType(this.o.adminKey, 'admin');
    const job = await callJson(this.http, { method: 'GET', path: `/v2/agent/${seg(projectId)}/job/${seg(id)}`, key, signal: o.signal }, AgentJobSchema);
    return { ...job, id };
  }

  /** Poll until completed, archived or failed; backoff from intervalMs doubling to 8×, bounded by timeoutMs. */
  async waitForAgentJob(projectId: string, id: string, o: { intervalMs?: number; timeoutMs?: number; signal?: AbortSignal } = {}): Promise<AgentJob> {
    checkKeyType(this.o.adminKey, 'admin');
    const interval = o.intervalMs ?? 1000;
    const timeoutMs = o.timeoutMs ?? 10 * 60_000;
    const deadline = Date.now() + timeoutMs;
    // The bound holds for a request in flight too: a service that never answers, or trickles, is given up at the deadline.
    const due = timeoutSignal(timeoutMs);
    const signal = o.signal ? AbortSignal.any([o.signal, due]) : due;
    const late = (status: string) => new UpstreamError(`agent job ${id} ${status} after ${timeoutMs} ms`, undefined, { subject: id }, 'AIRLOCK_TIMEOUT');
    for (let i = 0; ; i++) {
      const job = await this.getAgentJob(projectId, id, { signal }).catch((err: unknown) => {
        if (due.aborted && !o.signal?.aborted) throw late('had no answer from the service');
        throw err;
      });
      if (AGENT_JOB_FINAL.has(job.status)) return job;
      const left = deadline - Date.now();
      if (left <= 0) throw late(`still ${job.status}`);
      await sleep(Math.min(interval * 2 ** Math.min(i, 3), left), undefined, { signal: o.signal }).catch((err: unknown) => {
        throw new AirlockError('AIRLOCK_ABORTED', `waiting for agent job ${id}: aborted`, 1, { subject: id }, { cause: err });
      });
    }
  }

  /**
   * The assistant's answer as validated UI message stream chunks, as they arrive. The request is
   * validated locally first; a stream that ends before `[DONE]` is an error (the answer was cut).
   */
  async *assistantMessage(domain: string, body: AssistantRequest, o: { signal?: AbortSignal } = {}): AsyncGenerator<UiMessageChunk> {
    const key = checkKeyType(this.o.assistantKey, 'assistant');
    const req = AssistantRequestSchema.safeParse(body);
    if (!req.success) throw new AirlockError('AIRLOCK_USAGE', `invalid assistant request: ${describeZodError(req.error)}`, 2, { subject: 'body' });
    const path = `/discovery/v2/assistant/${seg(domain)}/message`;
    const res = await send(this.http, { method: 'POST', path, key, body: req.data, signal: o.signal, stream: true, accept: 'text/event-stream' });
    const parser = new SseParser();
    const chunks = res.body[Symbol.asyncIterator]();
    try {
      for (;;) {
        let next: IteratorResult<unknown>;
        try {
          next = await chunks.next();
        } catch (err) {
          if (o.signal?.aborted) throw new AirlockError('AIRLOCK_ABORTED', `POST ${path}: aborted`, 1, { subject: path }, { cause: err });
          throw netError(err, { url: this.o.baseUrl, bodyTimeoutMs: this.o.timeoutMs ?? 30_000, what: `POST ${path}`, subject: path });
        }
        if (next.done) break;
        for (const payload of parser.push(next.value as Buffer)) {
          if (payload === '[DONE]') return;
          yield parseChunk(payload, path);
        }
      }
      throw new UpstreamError(`POST ${path}: stream ended before [DONE]`, res.statusCode, { subject: path }, 'AIRLOCK_STREAM_TRUNCATED');
    } finally {
      res.body.destroy();
    }
  }
}

function parseChunk(payload: string, path: string): UiMessageChunk {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    throw new UpstreamError(
      `POST ${path}: a stream chunk is not JSON (${Buffer.byteLength(payload)} bytes)`,
      undefined,
      { subject: path },
      'AIRLOCK_UPSTREAM_SCHEMA',
    );
  }
  const twice = firstDuplicateKey(payload);
  if (twice !== null)
    throw new UpstreamError(
      `POST ${path}: a stream chunk names the key ${sanitize(JSON.stringify(twice.slice(0, 200)))} twice in one object`,
      undefined,
      { subject: path },
      'AIRLOCK_UPSTREAM_SCHEMA',
    );
  const r = UiMessageChunkSchema.safeParse(value);
  if (!r.success)
    throw new UpstreamError(
      `POST ${path}: unexpected stream chunk: ${sanitize(describeZodError(r.error))}`,
      undefined,
      { subject: path },
      'AIRLOCK_UPSTREAM_SCHEMA',
    );
  return r.data;
}
