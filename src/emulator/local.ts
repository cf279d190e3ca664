import { lstat, mkdir, readlink, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { UsageError, outputExists } from '../errors.js';
import { kindOf, makeTempFolder, writeDurably } from '../util/fsx.js';
import { escapeControls, quoted } from '../util/terminal.js';
import { listenError } from '../util/listen.js';
import { describeFsError } from '../util/fs-words.js';
import { startEmulator } from './server.js';

/**
 * `airlock emulate`: the service stand-in on a port until Ctrl-C. Its keys are random per run and
 * never printed (output redacts every svc_ key anyway): they are written to 0600 files in a
 * private temp folder whose paths are printed, ready for AIRLOCK_ADMIN_KEY_FILE.
 */
/** Agent jobs that exist from the start, so `airlock agent-job` can be tried at once. */
const DEMO_AGENT_JOBS = [
  { projectId: 'demo', id: 'agj_completes', outcome: 'completed' as const },
  { projectId: 'demo', id: 'agj_fails', outcome: 'failed' as const },
];

interface KeyFiles {
  adminFile: string;
  assistantFile: string;
  remove(): Promise<void>;
}

/**
 * The emulator's keys in 0600 files, each written whole and never over an existing file
 * (writeDurably, exclusive: a script waiting for admin.key never reads half a key, and a file of
 * the user's is never replaced). Into a private temp folder, or into `dir` (created 0700 when
 * missing; a link there is not followed). remove() takes away only what was written here.
 */
async function writeKeyFiles(dir: string | undefined, k: { admin: string; assistant: string }): Promise<KeyFiles> {
  let made: string | null = null;
  const bad = (why: string, errno?: string) =>
    new UsageError(`--keys-dir ${escapeControls(dir ?? '')} ${why}`, { subject: '--keys-dir', ...(errno ? { errno } : {}) }, 'AIRLOCK_KEYS_DIR');
  if (dir === undefined) made = dir = await makeTempFolder('airlock-emulate-');
  else {
    const st = await lstat(dir).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') return null;
      throw bad(describeFsError(err), err.code);
    });
    if (st === null) {
      made = await mkdir(dir, { mode: 0o700 }).then(
        () => dir!,
        (err: NodeJS.ErrnoException) => {
          throw bad(err.code === 'ENOENT' ? 'cannot be made: its parent folder does not exist' : describeFsError(err, 'write'), err.code);
        },
      );
    } else if (st.isSymbolicLink())
      throw bad(`is a symbolic link (to ${quoted(await readlink(dir).catch(() => '?'))}), which is not followed; give the folder itself`);
    else if (!st.isDirectory()) throw bad(`is ${kindOf(st)}, not a folder`);
  }
  const adminFile = join(dir, 'admin.key');
  const assistantFile = join(dir, 'assistant.key');
  const written: string[] = [];
  const remove = async () => {
    if (made !== null) await rm(made, { recursive: true, force: true });
    else await Promise.all(written.map((f) => rm(f, { force: true })));
  };
  try {
    for (const [file, key] of [
      [assistantFile, k.assistant],
      [adminFile, k.admin],
    ] as const) {
      if (
        await lstat(file).then(
          () => true,
          () => false,
        )
      )
        throw outputExists(file, 'remove it or give another --keys-dir');
      await writeDurably(file, (fh) => fh.writeFile(key + '\n'), { mode: 0o600, exclusive: true });
      written.push(file);
    }
  } catch (err) {
    await remove();
    throw err;
  }
  return { adminFile, assistantFile, remove };
}

export interface LocalEmulator {
  url: string;
  adminFile: string;
  assistantFile: string;
  close(): Promise<void>;
}

/**
 * The emulator as `airlock emulate` runs it: listening (a taken port said in words), with the
 * demo agent jobs, its keys in files (`keysDir`, else a private temp folder). close() stops it
 * and then removes the key files; a refused key folder stops it before the error is thrown.
 */
export async function startLocalEmulator(o: { port: number; host: string; keysDir?: string }): Promise<LocalEmulator> {
  const emu = await startEmulator({ port: o.port, host: o.host, agentJobMs: 2000, agentJobs: DEMO_AGENT_JOBS }).catch((err: unknown) => {
    throw listenError(err, o.host, o.port);
  });
  let keys: KeyFiles;
  try {
    keys = await writeKeyFiles(o.keysDir, emu.keys);
  } catch (err) {
    await emu.close();
    throw err;
  }
  return {
    url: emu.url,
    adminFile: keys.adminFile,
    assistantFile: keys.assistantFile,
    close: async () => {
      await emu.close();
      await keys.remove();
    },
  };
}
