// Password rules and argon2id hashing (OWASP parameters), on low-priority threads of its own, off the event loop.
import { createRequire } from 'node:module';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { Algorithm } from '@node-rs/argon2';

/** Password length bounds, counted in Unicode code points. */
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 72;
/** Username bound in code points. */
export const USERNAME_MAX = 64;

const options = { algorithm: Algorithm.Argon2id, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/**
 * Runs `task`s at most `limit` at a time, first come first served. Password hashing goes through one: each hash takes
 * tens of milliseconds of a core, so a flood of sign-ins (wrong passwords from ever new addresses) would otherwise take
 * every core and starve the event loop that serves everyone else's pages; instead the flood waits in line.
 */
export function createLimiter(limit: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running < limit) running++;
    else await new Promise<void>((resolve) => waiting.push(resolve)); // the finishing task hands its place over
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/**
 * The code of a hashing thread: argon2 run synchronously on a thread of its own, one hash at a time. On Linux the
 * thread first lowers its own scheduling priority (nice 19; Linux keeps a nice value per thread, and `os.setPriority()`
 * with no pid names the calling thread), so a flood of sign-ins never takes a core from the event loop that serves
 * everyone else's pages, nor from the database: hashing runs on what CPU they leave. Elsewhere the thread runs at
 * normal priority.
 */
const HASHING_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
if (process.platform === 'linux') {
  try { require('node:os').setPriority(19); } catch {}
}
const argon2 = require(workerData.argon2);
parentPort.on('message', (job) => {
  try {
    const value = job.stored === undefined ? argon2.hashSync(job.password, workerData.options) : argon2.verifySync(job.stored, job.password);
    parentPort.postMessage({ value });
  } catch (err) {
    parentPort.postMessage({ failed: String(err && err.message ? err.message : err) });
  }
});
`;

/**
 * How long a hashing thread may wait for work before it exits: after a burst of sign-ins the process gives back each
 * thread's memory (about 10 MB) instead of keeping one thread per core for good. The next hash starts a new one.
 */
const THREAD_IDLE_MS = 30_000;

/** Threads not hashing now, each with the timer that ends it; a thread is created when none is idle. */
const idleThreads: { thread: Worker; expiry: NodeJS.Timeout }[] = [];

/** The most recently used idle thread (so the others reach their idle time), or a new one. */
function takeThread(): Worker {
  const idle = idleThreads.pop();
  if (!idle) return newThread();
  clearTimeout(idle.expiry);
  return idle.thread;
}

/** Makes a thread that finished its job idle; it exits after THREAD_IDLE_MS without work. */
function putBack(thread: Worker): void {
  const entry = {
    thread,
    expiry: setTimeout(() => {
      idleThreads.splice(idleThreads.indexOf(entry), 1);
      void thread.terminate();
    }, THREAD_IDLE_MS),
  };
  entry.expiry.unref(); // an idle thread never keeps the process alive
  idleThreads.push(entry);
}

function newThread(): Worker {
  // Resolved from this module, so the thread loads the same argon2 wherever the process was started from.
  const argon2 = createRequire(import.meta.url).resolve('@node-rs/argon2');
  // No execArgv: the thread needs no loader (under the tests' tsx, it would otherwise load it too).
  return new Worker(HASHING_THREAD, { eval: true, execArgv: [], workerData: { argon2, options } });
}

/**
 * Runs one hash (no `stored`) or verification on an idle thread; a thread that fails or exits is dropped, not reused.
 */
function onThread(job: { password: string; stored?: string }): Promise<string | boolean> {
  const thread = takeThread();
  thread.ref(); // keeps a command such as `svc accounts create` alive until its hash is done
  return new Promise((resolve, reject) => {
    const settle = () => {
      thread.off('message', done);
      thread.off('error', fail);
      thread.off('exit', fail);
    };
    const fail = (err: Error | number) => {
      settle();
      void thread.terminate();
      reject(err instanceof Error ? err : new Error(`the hashing thread exited (${err})`));
    };
    const done = (answer: { value?: string | boolean; failed?: string }) => {
      settle();
      thread.unref(); // an idle thread never keeps the process alive
      putBack(thread);
      if (answer.failed !== undefined) reject(new Error(answer.failed));
      else resolve(answer.value!);
    };
    thread.once('message', done);
    thread.once('error', fail);
    thread.once('exit', fail);
    thread.postMessage(job);
  });
}

/** All cores but one hash passwords at once (one on a two-core machine): the event loop keeps a core. */
const hashing = createLimiter(Math.max(1, os.availableParallelism() - 1));

/** Hashes a password with argon2id; the only form in which passwords are stored. */
export function hashPassword(password: string): Promise<string> {
  return hashing(() => onThread({ password })) as Promise<string>;
}

let dummyHash: Promise<string> | undefined;

/** Verifies a password; with no stored hash it verifies against a dummy so unknown usernames cost the same time. */
export async function verifyPassword(stored: string | undefined, password: string): Promise<boolean> {
  if (stored === undefined) {
    dummyHash ??= hashPassword('not-a-real-password-for-timing');
    const dummy = await dummyHash;
    await hashing(() => onThread({ stored: dummy, password })).catch(() => false);
    return false;
  }
  return hashing(() => onThread({ stored, password }) as Promise<boolean>).catch(() => false);
}

/** Length of a string in Unicode code points, as the password and username rules count. */
export function codePoints(value: string): number {
  return [...value].length;
}
