/**
 * Plain words for the errors a path a user gave can raise: the one errno-to-words table of the
 * tool (never a raw errno in a message). `read` words complete "PATH …" ("does not exist");
 * `write` words complete "cannot write PATH: …" ("its folder does not exist").
 */
const WORDS: Record<string, { read: string; write: string }> = {
  ENOENT: { read: 'does not exist', write: 'its folder does not exist' },
  EACCES: { read: 'cannot be read (permission denied)', write: 'permission denied' },
  EPERM: { read: 'cannot be read (permission denied)', write: 'permission denied' },
  EISDIR: { read: 'is a folder, not a file', write: 'it is a folder' },
  ELOOP: { read: 'is a loop of symbolic links', write: 'its path is a loop of symbolic links' },
  ENOTDIR: { read: 'is not reachable: a part of its path is not a folder', write: 'a part of its path is not a folder' },
  ENAMETOOLONG: { read: 'has a name that is too long', write: 'its name is too long' },
  ENXIO: { read: 'is a device or socket, not a regular file', write: 'it is a device or socket, not a regular file' },
  ENODEV: { read: 'is a device or socket, not a regular file', write: 'it is a device or socket, not a regular file' },
  EIO: { read: 'cannot be read (input/output error)', write: 'input/output error' },
  EMFILE: { read: 'cannot be opened: too many open files', write: 'too many open files' },
  ENFILE: { read: 'cannot be opened: too many open files', write: 'too many open files' },
  EEXIST: { read: 'exists already', write: 'it exists already' },
  EROFS: { read: 'cannot be read (read-only file system)', write: 'the file system is read-only' },
  ENOSPC: { read: 'cannot be read (no space left on the device)', write: 'no space left on the device' },
  EDQUOT: { read: 'cannot be read (disk quota exhausted)', write: 'the disk quota is exhausted' },
};

export function describeFsError(err: unknown, op: 'read' | 'write' = 'read'): string {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  const words = typeof code === 'string' ? WORDS[code] : undefined;
  if (words) return words[op];
  return op === 'read' ? 'cannot be read (the system refused it)' : 'the file system refused it';
}

/**
 * What is wrong with a file a user named, as a kind the caller can advise on (a key file's
 * refusal says how to make a key; a folder's, to give the file inside it).
 */
export type FileFault = 'missing' | 'folder' | 'not-regular' | 'denied' | 'too-big' | 'unreadable';

/** The fault an errno stands for (a folder met by open(2) is EISDIR). */
export function faultOf(err: unknown): FileFault {
  switch ((err as NodeJS.ErrnoException | null)?.code) {
    case 'ENOENT':
    case 'ENOTDIR':
      return 'missing';
    case 'EISDIR':
      return 'folder';
    case 'EACCES':
    case 'EPERM':
      return 'denied';
    case 'ENXIO':
    case 'ENODEV':
      return 'not-regular';
    default:
      return 'unreadable';
  }
}

/**
 * What a path is, in words ("a FIFO (named pipe)"), from stat or lstat (lstat's symbolic link
 * included), for refusals of what is not a regular file.
 */
export function kindOf(st: {
  isDirectory(): boolean;
  isFIFO(): boolean;
  isCharacterDevice(): boolean;
  isBlockDevice(): boolean;
  isSocket(): boolean;
  isSymbolicLink?(): boolean;
  isFile?(): boolean;
}): string {
  if (st.isSymbolicLink?.()) return 'a symbolic link';
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isSocket()) return 'a socket';
  return st.isFile?.() ? 'a regular file' : 'not a regular file';
}

/**
 * A message that quotes Node's errno text (`ENOENT: no such file or directory, open '/x/y'`, as a
 * worker's error passes it on) with that part in words: `/x/y does not exist`.
 */
export function errnoInWords(message: string): string {
  return message.replace(/\b(E[A-Z]+): [^,']*, \w+ '([^']*)'/g, (_m, code: string, path: string) => `${path} ${describeFsError({ code }, 'read')}`);
}
