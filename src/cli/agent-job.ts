import { UsageError, UpstreamJobFailedError } from '../errors.js';
import { ServiceClient } from '../upstream/client.js';
import { checkKeyType, readAdminKey } from '../upstream/keys.js';
import { sanitize } from '../upstream/http.js';
import type { AgentJob } from '../upstream/schemas/agent-job.js';
import { numeric, parse, requireApiUrl } from './args.js';
import { log, printResult, type Command } from './context.js';

const USAGE = `usage: airlock agent-job PROJECT_ID JOB_ID [--wait] [--timeout SECONDS] [--api-url URL] [--json]

Read an agent job of the service (GET /v2/agent/PROJECT_ID/job/JOB_ID) and print its pull request
link (prLink) on stdout, or nothing there when it has none yet; its status goes to stderr.

  --wait              poll until the job is completed, archived or failed (1 s, backing off to 8 s)
  --timeout SECONDS   with --wait: give up after this long (default 600; exit 1)
  --api-url URL       the service's base URL (default: $AIRLOCK_API_URL)
  --json              print {ok, projectId, job} on stdout instead, job with the documented fields
                      {id, status, source, model, prLink, createdAt, archivedAt}

The admin key comes from AIRLOCK_ADMIN_KEY or AIRLOCK_ADMIN_KEY_FILE, never from a flag.
Exit codes: 0 read (and with --wait: completed or archived), 1 failure or --timeout passed,
2 usage, 3 the agent job failed, 5 auth (missing or wrong key type, 401, 403).`;

/** Ids go into the URL path (encoded); printable, bounded. */
const ID = /^[!-~]{1,256}$/;

/** The job as documented, whatever else the answer carried: what --json prints. */
function documented(j: AgentJob) {
  return {
    id: j.id,
    status: j.status,
    source: j.source ? { repository: j.source.repository ?? null, ref: j.source.ref ?? null } : null,
    model: j.model ?? null,
    prLink: j.prLink ?? null,
    createdAt: j.createdAt ?? null,
    archivedAt: j.archivedAt ?? null,
  };
}

const command: Command = {
  summary: 'read an agent job (with --wait: until it ends) and print its pull request link',
  usage: USAGE,
  async run(argv, ctx) {
    const { values, positionals, numbers } = parse(argv, {
      wait: { type: 'boolean' },
      timeout: numeric({ min: 1, max: 86_400, unit: 'seconds' }),
      'api-url': { type: 'string' },
      json: { type: 'boolean' },
    });
    if (positionals.length !== 2) throw new UsageError('airlock agent-job takes PROJECT_ID and JOB_ID', { subject: 'argv' });
    const [projectId, jobId] = positionals as [string, string];
    for (const [what, v] of [
      ['PROJECT_ID', projectId],
      ['JOB_ID', jobId],
    ] as const) {
      if (!ID.test(v)) throw new UsageError(`invalid ${what} ${JSON.stringify(sanitize(v, 80))}: 1 to 256 printable characters, no spaces`, { subject: what });
    }
    const timeoutS = numbers.timeout;
    if (timeoutS !== undefined && !values.wait) throw new UsageError('--timeout only applies with --wait', { subject: '--timeout' });
    const apiUrl = requireApiUrl(values['api-url'], ctx.env);
    const client = new ServiceClient({ baseUrl: apiUrl, adminKey: checkKeyType(await readAdminKey(ctx.env), 'admin') });

    const job = values.wait
      ? await client.waitForAgentJob(projectId, jobId, { timeoutMs: (timeoutS ?? 600) * 1000 })
      : await client.getAgentJob(projectId, jobId);
    const link = job.prLink ? sanitize(job.prLink, 4096) : undefined;
    if (job.status === 'failed') {
      const err = new UpstreamJobFailedError(`agent job ${jobId} of project ${projectId} failed upstream`, { subject: jobId });
      if (values.json) printResult(ctx, true, { ok: false, ...err.toJSON(), projectId, job: documented(job) }, () => '');
      log(ctx, `airlock agent-job: error: ${err.message} [${err.code}]`);
      return err.exitCode;
    }
    if (!values.json) log(ctx, `agent job ${jobId} (project ${projectId}): ${job.status}${link ? '' : ', no pull request link yet'}`);
    printResult(ctx, Boolean(values.json), { ok: true, projectId, job: documented(job) }, () => link ?? '');
    return 0;
  },
};
export default command;
