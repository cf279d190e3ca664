import { request } from 'undici';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { until } from '../helpers/wait.js';

/** Start an export on the emulator, wait for it, and get a bundle link — raw HTTP, no client. */
export async function bundleLink(
  emu: RunningEmulator,
  domain = 'docs.example.com',
): Promise<{ bundleUrl: string; sizeBytes: number; expiresAt: string; jobId: string }> {
  const auth = { authorization: `Bearer ${emu.keys.admin}`, 'content-type': 'application/json' };
  const created = await request(`${emu.url}/v1/static-export/jobs`, { method: 'POST', headers: auth, body: JSON.stringify({ domain }) });
  const { jobId } = (await created.body.json()) as { jobId: string };
  return until(
    async () => {
      const res = await request(`${emu.url}/v1/static-export/jobs/${jobId}/bundle`, { method: 'POST', headers: auth });
      if (res.statusCode === 200) return (await res.body.json()) as { bundleUrl: string; sizeBytes: number; expiresAt: string; jobId: string };
      await res.body.dump();
      return undefined;
    },
    { timeoutMs: 10_000, intervalMs: 20, what: 'a ready bundle' },
  );
}
