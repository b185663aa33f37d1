import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import { test } from 'node:test';
import { createLimiter, hashPassword, verifyPassword } from './passwords.ts';

test('the hashing limiter runs at most its limit at once, in arrival order, and frees its place on failure', async () => {
  const limited = createLimiter(2);
  let running = 0;
  let peak = 0;
  const started: number[] = [];
  const gates: (() => void)[] = [];
  const tasks = Array.from({ length: 6 }, (_, i) =>
    limited(async () => {
      started.push(i);
      running++;
      peak = Math.max(peak, running);
      await new Promise<void>((resolve) => gates.push(resolve));
      running--;
      if (i === 1) throw new Error('task 1 fails');
      return i;
    }),
  );
  const settled = Promise.allSettled(tasks);
  // Let each started task reach its gate, then open the gates one at a time.
  for (let opened = 0; opened < 6; opened++) {
    await new Promise((resolve) => setImmediate(resolve));
    assert.ok(running <= 2, `at most two at once (saw ${running})`);
    gates.shift()!();
  }
  const results = await settled;
  assert.equal(peak, 2);
  assert.deepEqual(started, [0, 1, 2, 3, 4, 5], 'first come, first served');
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
  );
  // A new task starts at once after all have finished: no place was lost to the failure.
  assert.equal(await limited(async () => 'again'), 'again');
});

test('passwords hash and verify on a thread of their own, at the lowest scheduling priority on Linux', async () => {
  const stored = await hashPassword('correct horse battery');
  assert.match(stored, /^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
  assert.equal(await verifyPassword(stored, 'correct horse battery'), true);
  assert.equal(await verifyPassword(stored, 'Correct horse battery'), false);
  assert.equal(await verifyPassword(undefined, 'correct horse battery'), false, 'an unknown user never verifies');
  assert.equal(
    await verifyPassword('not-a-hash', 'correct horse battery'),
    false,
    'a damaged hash is a wrong password, not a crash',
  );
  if (process.platform !== 'linux') return;
  // Each thread's nice value is field 19 of /proc/self/task/<tid>/stat (16 after the command name).
  const niceOf = (tid: string) => {
    const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  };
  const others = fs
    .readdirSync('/proc/self/task')
    .filter((tid) => tid !== String(process.pid))
    .map(niceOf);
  assert.ok(others.includes(19), `a hashing thread at nice 19 (other threads: ${others.join(', ')})`);
  assert.equal(niceOf(String(process.pid)), os.getPriority(), 'the main thread keeps its priority');
});
