import { readFileSync } from 'node:fs';

/**
 * A marker of when a process started, so that a pid reused by an unrelated process after the
 * holder died is not mistaken for the holder. Linux: field 22 of /proc/<pid>/stat (start time in
 * clock ticks since boot, see proc(5)). Elsewhere: "" and only the pid is checked.
 */
export function startMarker(pid: number): string {
  try {
    return procStat(pid)[19] ?? '';
  } catch {
    return '';
  }
}

/**
 * The fields of /proc/<pid>/stat after the command name (proc(5) field 3 is index 0), Linux only;
 * throws when the process is gone. The name (field 2) is in parentheses and may hold spaces and
 * parentheses: the fields start after the last ")".
 */
export function procStat(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** Is the process that wrote (pid, marker) still running? EPERM means alive (another user's). */
export function isAlive(pid: number, marker: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (!marker) return true;
  const now = startMarker(pid);
  return now === '' || now === marker;
}

/** This process's own identity as written into lock and lease files. */
export const self = { pid: process.pid, start: startMarker(process.pid) };
