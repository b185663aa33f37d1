// The hashing threads' lifetime, in a file of its own: the clock is mocked from the first hash on, and no other test's
// thread may be counted.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { hashPassword, verifyPassword } from './passwords.ts';

/** Threads of this process at nice 19: the hashing threads (passwords.test.ts checks that they lower themselves). */
function hashingThreads(): number {
  return fs.readdirSync('/proc/self/task').filter((tid) => {
    try {
      const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]) === 19;
    } catch {
      return false; // the thread exited while being read
    }
  }).length;
}

/** Waits (on the real clock: setTimeout is mocked) until the count of hashing threads is `n`, for at most 10 s. */
async function untilThreads(n: number): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (hashingThreads() !== n) {
    if (performance.now() > deadline) assert.fail(`expected ${n} hashing threads, there are ${hashingThreads()}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

test('a hashing thread exits after 30 s without work; one that gets work meanwhile stays; the next hash starts a new one', {
  skip: process.platform !== 'linux' && 'counts threads in /proc',
}, async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const stored = await hashPassword('correct horse battery');
  assert.equal(hashingThreads(), 1, 'one thread hashed');

  t.mock.timers.tick(20_000);
  assert.equal(await verifyPassword(stored, 'correct horse battery'), true, 'the idle thread verifies');
  assert.equal(hashingThreads(), 1, 'the same thread did it, no second one');
  t.mock.timers.tick(20_000); // 40 s after the first job, 20 s after the second
  assert.equal(hashingThreads(), 1, 'its idle time started again at its last job');
  t.mock.timers.tick(9_999);
  assert.equal(hashingThreads(), 1, 'still there just before 30 s idle');

  t.mock.timers.tick(1);
  await untilThreads(0);

  assert.equal(await verifyPassword(stored, 'Correct horse battery'), false);
  assert.equal(await verifyPassword(stored, 'correct horse battery'), true, 'a new thread verifies');
  assert.equal(hashingThreads(), 1);
});
