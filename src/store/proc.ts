import { readFileSync } from 'node:fs';

/**
 * A marker of when a process started, so that a pid reused by an unrelated process after the
 * holder died is not mistaken for the holder. Linux: field 22 of /proc/<pid>/stat (start time in
 * clock ticks since boot, see proc(5)). Elsewhere: "" and only the pid is checked.
 */
export function startMarker(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: split after the last ")".
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[19] ?? '';
  } catch {
    return '';
  }
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
