import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createLimiter } from './passwords.ts';

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
  assert.deepEqual(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled', 'fulfilled']);
  // A new task starts at once after all have finished: no place was lost to the failure.
  assert.equal(await limited(async () => 'again'), 'again');
});
