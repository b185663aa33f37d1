// chain(): the middleware steps run as one Hono middleware with compose's semantics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Hono } from 'hono';
import type { AppEnv } from './env.ts';
import { chain, type Step } from './middleware.ts';

function appWith(...steps: Step[]) {
  const app = new Hono<AppEnv>();
  app.use('*', chain(...steps));
  app.get('/route', (c) => c.text('route'));
  app.get('/route-async', async (c) => c.text('route async'));
  app.onError((err, c) => c.text(`handled: ${err.message}`, 500));
  return app;
}

test('steps run in order around the route, and each sees the response once the later ones answered', async () => {
  const seen: string[] = [];
  const around =
    (name: string): Step =>
    async (c, next) => {
      seen.push(`${name} in`);
      await next();
      seen.push(`${name} out: ${c.res.status} ${await c.res.clone().text()}`);
    };
  const passThrough: Step = (_c, next) => next();
  for (const path of ['/route', '/route-async']) {
    seen.length = 0;
    const res = await appWith(around('a'), passThrough, around('b')).request(path);
    assert.equal(await res.text(), path === '/route' ? 'route' : 'route async');
    const body = path === '/route' ? 'route' : 'route async';
    assert.deepEqual(seen, ['a in', 'b in', `b out: 200 ${body}`, `a out: 200 ${body}`]);
  }
});

test('a step answering with a response, synchronously or not, stops the chain and earlier steps see its answer', async () => {
  for (const answer of [(c: Parameters<Step>[0]) => c.text('no', 403), async (c: Parameters<Step>[0]) => c.text('no', 403)]) {
    const seen: string[] = [];
    let reachedLater = false;
    const app = appWith(
      async (c, next) => {
        await next();
        seen.push(`${c.res.status}`);
      },
      (c) => answer(c),
      (_c, next) => {
        reachedLater = true;
        return next();
      },
    );
    const res = await app.request('/route');
    assert.equal(res.status, 403);
    assert.equal(await res.text(), 'no');
    assert.deepEqual(seen, ['403']);
    assert.equal(reachedLater, false);
  }
});

test('what a step throws, synchronously or not, reaches the error handler; an earlier step may catch it', async () => {
  for (const thrower of [
    () => {
      throw new Error('sync');
    },
    async () => {
      throw new Error('async');
    },
  ] as Step[]) {
    const res = await appWith((_c, next) => next(), thrower).request('/route');
    assert.equal(res.status, 500);
    assert.match(await res.text(), /^handled: (sync|async)$/);
    const caught = await appWith(async (c, next) => {
      try {
        await next();
      } catch {
        return c.text('caught', 413);
      }
    }, thrower).request('/route');
    assert.equal(caught.status, 413);
  }
});

test('a request no route matches still passes through every step', async () => {
  let steps = 0;
  const count: Step = (_c, next) => {
    steps++;
    return next();
  };
  const res = await appWith(count, count).request('/nowhere');
  assert.equal(res.status, 404);
  assert.equal(steps, 2);
});

test('as under compose, a response answered after the later steps finalized one is ignored; next() runs once', async () => {
  const late = await appWith(async (c, next) => {
    await next();
    return c.text('late', 418);
  }).request('/route');
  assert.equal(late.status, 200);
  assert.equal(await late.text(), 'route');
  const twice = await appWith(async (_c, next) => {
    await next();
    await next();
  }).request('/route');
  assert.equal(twice.status, 500);
  assert.match(await twice.text(), /called multiple times/);
});

test('a native Response (as fetch or Response.redirect make) answered by a step is the answer, under the Node server too', async () => {
  const app = appWith(() => Response.redirect('http://localhost/elsewhere', 302));
  const { serve } = await import('@hono/node-server');
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', resolve));
  try {
    const { port } = server.address() as import('node:net').AddressInfo;
    for (const res of [await app.request('/route'), await fetch(`http://127.0.0.1:${port}/route`, { redirect: 'manual' })]) {
      assert.equal(res.status, 302);
      assert.equal(res.headers.get('location'), 'http://localhost/elsewhere');
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
