/** src/upstream — the only module that knows the service's API shapes (docs/design.md). */
export { ServiceClient, type ClientOptions } from './client.js';
export { readAdminKey, checkKeyType, keyKind, type KeyKind } from './keys.js';
export { SseParser, sseData } from './sse.js';
export { describeZodError } from './describe.js';
export { DEFAULT_RETRY, backoffDelay, parseRetryAfter, type RetryPolicy } from './retry.js';
export { sanitize, type RetryInfo } from './http.js';
export { describeNetError, netError, type NetContext, type NetFailure, type NetCode } from './net-error.js';
export {
  ExportJobSchema,
  CreatedExportJobSchema,
  StartExportRequestSchema,
  JobStatusSchema,
  type ExportJob,
  type JobStatus,
  type StartExportRequest,
} from './schemas/export-job.js';
export { BundleLinkSchema, type BundleLink } from './schemas/bundle.js';
export { AgentJobSchema, AgentJobStatusSchema, AGENT_JOB_FINAL, type AgentJob, type AgentJobStatus } from './schemas/agent-job.js';
export { ErrorBodySchema, type ErrorBody } from './schemas/error.js';
export {
  AssistantRequestSchema,
  question,
  UiMessageSchema,
  UiMessagePartSchema,
  type AssistantRequest,
  type ParsedAssistantRequest,
  type UiMessage,
} from './schemas/assistant.js';
export { UiMessageChunkSchema, finishThreadId, isKnownChunk, type UiMessageChunk, type KnownUiMessageChunk } from './schemas/ui-chunk.js';
