/**
 * The Dockerfile at the repository root. No container engine runs here, so: lint it with the
 * registry's Dockerfile linter (dockerfile-utils, the VS Code Docker extension's validator, on
 * dockerfile-ast), check what the image promises (stages, non-root user, tini, volumes, health
 * check), and run the exact start-up the image performs outside a container: the ENTRYPOINT and
 * CMD command line, the image's ENV, a non-root uid, and a read-only copy of what the runtime stage
 * holds (dist/src, package.json, the node_modules). Only the paths under / (made temp folders)
 * and the port/host values (127.0.0.1 and a free port, tests never bind other addresses) differ.
 */
import { describe, it, expect, beforeAll, afterAll } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DockerfileParser } from 'dockerfile-ast';
import { validate, ValidationSeverity } from 'dockerfile-utils';
import { airlock, asNobody } from '../helpers/bin.js';
import { makePackage } from '../helpers/make-package.js';
import { until } from '../helpers/wait.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
let text: string;
let work: string;

const strict = {
  deprecatedMaintainer: ValidationSeverity.ERROR,
  directiveCasing: ValidationSeverity.ERROR,
  emptyContinuationLine: ValidationSeverity.ERROR,
  instructionCasing: ValidationSeverity.ERROR,
  instructionCmdMultiple: ValidationSeverity.ERROR,
  instructionEntrypointMultiple: ValidationSeverity.ERROR,
  instructionHealthcheckMultiple: ValidationSeverity.ERROR,
  instructionJSONInSingleQuotes: ValidationSeverity.ERROR,
  instructionWorkdirRelative: ValidationSeverity.ERROR,
};

beforeAll(async () => {
  text = await readFile(join(ROOT, 'Dockerfile'), 'utf8');
  work = await mkdtemp(join(tmpdir(), 'airlock-docker-'));
  await chmod(work, 0o755);
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/** The runtime stage: instructions after the last FROM. */
function runtimeStage() {
  const df = DockerfileParser.parse(text);
  const froms = df.getFROMs();
  const last = froms[froms.length - 1]!;
  const line = last.getRange().start.line;
  const ins = df.getInstructions().filter((i) => i.getRange().start.line >= line);
  const one = (kw: string) => ins.filter((i) => i.getKeyword() === kw);
  const json = (kw: string) => JSON.parse(one(kw)[0]!.getArgumentsContent()!) as string[];
  const env: Record<string, string> = {};
  for (const e of one('ENV')) for (const m of e.getArgumentsContent()!.matchAll(/([A-Z_]+)=(\S+)/g)) env[m[1]!] = m[2]!;
  return { df, froms, one, json, env };
}

describe('Dockerfile', () => {
  it('lints clean with every dockerfile-utils rule set to error (and the linter does catch a broken one)', () => {
    expect(validate(text, strict)).toEqual([]);
    const broken = text.replace('WORKDIR /app', 'workdir app').replace(/^CMD .*$/m, 'CMD [\'serve\']\nCMD ["serve"]');
    expect(validate(broken, strict).length).toBeGreaterThanOrEqual(3);
  });

  it('is multi-stage on Node 24, installs production dependencies with npm ci --omit=dev, runs as a numeric non-root user under tini', () => {
    const { froms, one, json, env, df } = runtimeStage();
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const arg = df
      .getInstructions()
      .find((i) => i.getKeyword() === 'ARG')!
      .getArgumentsContent()!;
    expect(arg).toMatch(/^NODE_IMAGE=node:24[-.]/);
    expect(froms.every((f) => f.getArgumentsContent()!.startsWith('${NODE_IMAGE}'))).toBe(true);
    const runs = df
      .getInstructions()
      .filter((i) => i.getKeyword() === 'RUN')
      .map((i) => i.getArgumentsContent()!);
    expect(runs.some((r) => r.includes('npm ci --omit=dev'))).toBe(true);
    // every COPY --from names an earlier stage
    const stages = froms.map((f) => f.getBuildStage()).filter(Boolean);
    for (const c of df.getCOPYs()) {
      const from = c.getFromFlag()?.getValue();
      if (from) expect(stages).toContain(from);
    }
    const user = one('USER')[0]!.getArgumentsContent()!;
    expect(user).toMatch(/^[1-9]\d*:[1-9]\d*$/); // numeric: Kubernetes runAsNonRoot can check it
    expect(json('ENTRYPOINT').slice(0, 2)).toEqual(['/usr/bin/tini', '--']);
    expect(json('CMD')[0]).toBe('serve');
    expect(env.AIRLOCK_STORE).toBe('/data/store');
    const volumes = JSON.parse(one('VOLUME')[0]!.getArgumentsContent()!) as string[];
    expect(volumes).toContain('/tmp');
    expect(volumes.some((v) => env.AIRLOCK_STORE!.startsWith(v + '/'))).toBe(true);
    expect(one('HEALTHCHECK')[0]!.getArgumentsContent()).toContain('/_airlock/health');
  });

  it("the image tag, the chart's appVersion and the documented build command agree: airlock:<package.json version>", async () => {
    const { version } = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const chart = await readFile(join(ROOT, 'deploy/helm/airlock/Chart.yaml'), 'utf8');
    expect(/^appVersion: "?([^"\n]+)"?$/m.exec(chart)?.[1]).toBe(version);
    const values = await readFile(join(ROOT, 'deploy/helm/airlock/values.yaml'), 'utf8');
    expect(values).toMatch(/^ {2}repository: airlock$/m);
    expect(values).toMatch(/^ {2}tag: ""/m); // the chart's appVersion
    const build = `docker build -t airlock:${version} .`;
    expect(text).toContain(build);
    const guide = await readFile(join(ROOT, 'docs/kubernetes.md'), 'utf8');
    expect(guide).toContain(build);
    expect(guide).toContain(`docker save airlock:${version}`);
    for (const m of guide.matchAll(/\bairlock:(\d[\w.-]*)/g)) expect(m[1], m[0]).toBe(version);
  });

  it('copies only paths that exist and that .dockerignore does not exclude', async () => {
    const ignored = (await readFile(join(ROOT, '.dockerignore'), 'utf8')).split('\n').filter(Boolean);
    const { df } = runtimeStage();
    for (const c of df.getCOPYs()) {
      if (c.getFromFlag()) continue;
      const args = c.getArguments().map((a) => a.getValue());
      for (const src of args.slice(0, -1)) {
        expect(spawnSync('test', ['-e', join(ROOT, src)]).status, src).toBe(0);
        expect(
          ignored.some((p) => src === p || src.startsWith(p + '/')),
          src,
        ).toBe(false);
      }
    }
  });

  it('the image start-up: same command and environment, non-root, read-only app, serves, health check passes, SIGTERM exits 0', async () => {
    const { json, env } = runtimeStage();
    // The runtime stage's /app, read-only: its dist/src and package.json copied, node_modules linked (root-owned, so read-only for the uid).
    const app = join(work, 'app');
    await mkdir(join(app, 'dist'), { recursive: true });
    await cp(join(ROOT, 'dist', 'src'), join(app, 'dist', 'src'), { recursive: true });
    await cp(join(ROOT, 'package.json'), join(app, 'package.json'));
    await symlink(join(ROOT, 'node_modules'), join(app, 'node_modules'));
    spawnSync('chmod', ['-R', 'a-w,a+rX', app]);
    // The volumes: /data (the store inside) and /tmp, owned by the image's user.
    const data = join(work, 'data');
    const tmp = join(work, 'tmp');
    await mkdir(tmp, { recursive: true });
    const store = env.AIRLOCK_STORE!.replace('/data', data);
    const { pkgPath } = await makePackage({ outDir: work, version: 'img-1' });
    const imp = airlock(['import', pkgPath, '--store', store, '--allow-unsigned', '--activate']);
    expect(imp.status, imp.stderr).toBe(0);
    const user = asNobody();
    if (user.uid !== undefined) {
      spawnSync('chown', ['-R', `${user.uid}:${user.gid}`, data, tmp]);
      await chown(work, 0, 0);
    }
    // Port 0, and the address the server prints: a port chosen here and freed again could be
    // taken by another test's server first.
    let port = 0;
    const entry = json('ENTRYPOINT').slice(2); // after tini --: node /app/dist/src/cli/bin.js
    expect(entry[0]).toBe('node');
    const cmd = json('CMD').map((a) => (a === '0.0.0.0' ? '127.0.0.1' : a === '8080' ? '0' : a));
    const imageEnv = { ...env, AIRLOCK_STORE: store, TMPDIR: tmp, HOME: data };
    const child = spawn(process.execPath, [entry[1]!.replace('/app', app), ...cmd], {
      env: { PATH: process.env.PATH, ...imageEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
      cwd: app,
      ...user,
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c));
    child.stderr.on('data', (c: Buffer) => (err += c));
    const exited = new Promise<number | null>((r) => child.on('exit', (c) => r(c)));
    try {
      await until(() => out.includes('http://'), { timeoutMs: 10_000, intervalMs: 50 }).catch(() => undefined);
      port = Number(/http:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1] ?? 0);
      expect(port, `${out}\n${err}`).toBeGreaterThan(0);
      const page = await fetch(`http://127.0.0.1:${port}/`);
      expect(page.status).toBe(200);
      expect(page.headers.get('x-airlock-version')).toBe('img-1');
      // The HEALTHCHECK's own command, as the engine would run it inside the container.
      const hc = JSON.parse(
        runtimeStage()
          .one('HEALTHCHECK')[0]!
          .getArgumentsContent()!
          .replace(/^[\s\S]*CMD\s+/, ''),
      ) as string[];
      expect(hc[0]).toBe('node');
      const health = spawnSync(process.execPath, hc.slice(1), {
        env: { PATH: process.env.PATH, ...imageEnv, AIRLOCK_PORT: String(port) },
        timeout: 10_000,
        ...user,
      });
      expect(health.status, String(health.stderr)).toBe(0);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    // The health check fails once nothing answers.
    const down = spawnSync(
      process.execPath,
      JSON.parse(
        runtimeStage()
          .one('HEALTHCHECK')[0]!
          .getArgumentsContent()!
          .replace(/^[\s\S]*CMD\s+/, ''),
      ).slice(1) as string[],
      { env: { PATH: process.env.PATH, AIRLOCK_PORT: String(port) }, timeout: 10_000 },
    );
    expect(down.status).toBe(1);
  }, 60_000);
});
