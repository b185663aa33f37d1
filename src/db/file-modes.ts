// The SQLite database holds every second-factor secret, the device-cookie key and SSO client and channel secrets: its
// folder and files are svc's user's alone (0700 and 0600), whatever the umask of the process that creates them.
import fs from 'node:fs';
import path from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Creates the folders above `file` that are missing (0700 each) and `file` itself, empty and 0600, unless it exists.
 * An existing folder or file keeps its mode (`svc config check` warns about one others can read). SQLite then makes
 * the -wal, -shm and -journal files beside it with the database file's own permissions.
 */
export function createPrivateFile(file: string): void {
  const absolute = path.resolve(file);
  const first = fs.mkdirSync(path.dirname(absolute), { recursive: true, mode: PRIVATE_DIR_MODE });
  // mkdir's mode is reduced by the umask: set it outright on every folder this call created (from `first` down).
  if (first !== undefined) {
    for (let dir = path.dirname(absolute); ; dir = path.dirname(dir)) {
      fs.chmodSync(dir, PRIVATE_DIR_MODE);
      if (dir === first || dir === path.dirname(dir)) break;
    }
  }
  let fd: number;
  try {
    fd = fs.openSync(absolute, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL, PRIVATE_FILE_MODE);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return;
    throw err;
  }
  try {
    fs.fchmodSync(fd, PRIVATE_FILE_MODE);
  } finally {
    fs.closeSync(fd);
  }
}

/** What is wrong with the modes of an existing database file and its folder: one line each, empty when private. */
export function looseModes(file: string): string[] {
  const absolute = path.resolve(file);
  const problems: string[] = [];
  const check = (target: string, what: string, fix: string) => {
    let mode: number;
    try {
      mode = fs.statSync(target).mode & 0o777;
    } catch {
      return;
    }
    if ((mode & 0o077) !== 0)
      problems.push(
        `${what} ${target} is ${mode.toString(8).padStart(4, '0')}: readable or writable by other users; ${fix}`,
      );
  };
  check(path.dirname(absolute), 'the database folder', `chmod 700 ${path.dirname(absolute)}`);
  for (const f of [absolute, `${absolute}-wal`, `${absolute}-shm`]) check(f, 'the database file', `chmod 600 ${f}`);
  return problems;
}
