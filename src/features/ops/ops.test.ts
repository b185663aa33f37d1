// /readyz, /metrics and the request log, through the app on both databases.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { sql } from 'kysely';
import { buildTestApp, type TestApp } from '../../../test/helpers/app.ts';
import { createTestDatabase, forEachDialect } from '../../../test/helpers/db.ts';
import { allowTestLoopback } from '../../../test/helpers/delivery.ts';
import { buildAccount } from '../../../test/helpers/factories.ts';
import { buildChannel, buildMessageWithDeliveries, clearOutbox } from '../../../test/helpers/outbox.ts';
import { useReceiver, type Receiver } from '../../../test/helpers/receiver.ts';
import { housekeepOnce } from '../../cli/housekeeping.ts';
import { redactTokens } from '../../http/middleware.ts';
import { createDeliveryWorker } from '../delivery/delivery.worker.ts';
import { throttleKind, verdictClass } from './metrics.service.ts';

const TOKEN = 'metrics-token-0123456789';

/** Scrapes /metrics with the token; returns the exposition text. */
async function scrape(t: TestApp): Promise<string> {
  const res = await t.app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200);
  return res.text();
}

/** The value of one sample line (`name{labels} value`), undefined when absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('redactTokens hides token-like query values and keeps the rest', () => {
  assert.equal(redactTokens('/setup?token=abc'), '/setup?token=[redacted]');
  assert.equal(redactTokens('/invite?x=1&token=abc&y=2'), '/invite?x=1&token=[redacted]&y=2');
  assert.equal(
    redactTokens('/login/sso/corp/callback?code=s3cr3t&state=st'),
    '/login/sso/corp/callback?code=[redacted]&state=st',
  );
  assert.equal(redactTokens('/reset?reset_token=abc'), '/reset?reset_token=[redacted]');
  assert.equal(redactTokens('/messages?page=2'), '/messages?page=2');
});

test('verdict classes and throttle kinds are bounded', () => {
  assert.equal(verdictClass('delivered', 204), 'delivered');
  assert.equal(verdictClass('failed', null), 'no_response');
  assert.equal(verdictClass('failed', 302), 'http_3xx');
  assert.equal(verdictClass('failed', 503), 'http_5xx');
  assert.equal(verdictClass('failed', 999), 'http_other');
  assert.equal(throttleKind('password:pair:alice:10.0.0.1'), 'password:pair');
  assert.equal(throttleKind('totp:addr:2001:db8::/64'), 'totp:addr');
  assert.equal(throttleKind('Odd Key'), 'other');
});

forEachDialect((getDb) => {
  let rx: Receiver;
  const receiver = useReceiver();
  beforeEach(async () => {
    await clearOutbox(getDb().db);
    await getDb().db.deleteFrom('auth_throttle').execute();
    rx = receiver();
  });

  test('/healthz and /readyz answer without a session', async () => {
    const t = buildTestApp(getDb());
    assert.equal((await t.client().get('/healthz')).text, 'ok');
    const ready = await t.client().get('/readyz');
    assert.equal(ready.status, 200);
    assert.equal(ready.text, 'ready');
  });

  test('/readyz is 503 with the reason when a migration is not applied', async () => {
    const t = buildTestApp(getDb());
    const [name] = (
      await sql<{ name: string }>`select name from kysely_migration order by name desc limit 1`.execute(t.deps.db)
    ).rows.map((r) => r.name);
    const row = await sql<Record<string, unknown>>`select * from kysely_migration where name = ${name}`.execute(
      t.deps.db,
    );
    await sql`delete from kysely_migration where name = ${name}`.execute(t.deps.db);
    try {
      const res = await t.client().get('/readyz');
      assert.equal(res.status, 503);
      assert.match(res.text, /not ready: the database schema is behind this version: 1 migration\(s\) not applied/);
      assert.ok(res.text.includes(name!), res.text);
    } finally {
      await sql`insert into kysely_migration (name, timestamp) values (${name}, ${row.rows[0]!.timestamp})`.execute(
        t.deps.db,
      );
    }
    assert.equal((await t.client().get('/readyz')).status, 200);
  });

  test('/readyz is 503 when the database cannot be reached', async () => {
    const other = await createTestDatabase(getDb().dialect);
    const t = buildTestApp(other);
    await other.drop();
    const res = await t.client().get('/readyz');
    assert.equal(res.status, 503);
    assert.match(res.text, /not ready: the database cannot be reached/);
  });

  test('/metrics is a 404 unless SVC_METRICS_TOKEN is set, then needs exactly that bearer token', async () => {
    assert.equal(
      (await buildTestApp(getDb()).app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })).status,
      404,
    );
    const t = buildTestApp(getDb(), { metricsToken: TOKEN });
    for (const authorization of [undefined, `Bearer ${TOKEN}x`, `Basic ${TOKEN}`, 'Bearer ']) {
      const res = await t.app.request('/metrics', { headers: authorization ? { authorization } : {} });
      assert.equal(res.status, 401, String(authorization));
      assert.equal(res.headers.get('location'), null, 'never a redirect');
    }
    const ok = await t.app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
    const text = await ok.text();
    assert.match(text, /^process_cpu_user_seconds_total /m, 'process metrics');
    assert.equal(sample(text, 'svc_ready'), 1);
  });

  test("bad /metrics tokens count in the per-address limit the API's bad tokens use: 429 with Retry-After, the right token still works", async () => {
    const t = buildTestApp(getDb(), { metricsToken: TOKEN });
    const from = (address: string, token: string, path = '/metrics') => {
      const c = t.client();
      c.address = address;
      return c.get(path, { authorization: `Bearer ${token}` });
    };
    const guesser = '198.51.100.7';
    // The same counter as the API's unknown tokens: 20 on /api/me and 10 on /metrics fill the address's 30.
    for (let i = 0; i < 20; i++)
      assert.equal((await from(guesser, `svc_pat_${'x'.repeat(43)}`, '/api/me')).status, 401);
    for (let i = 0; i < 10; i++) assert.equal((await from(guesser, `wrong-token-${i}`)).status, 401, `guess ${i + 1}`);
    const refused = await from(guesser, 'yet-another-guess');
    assert.equal(refused.status, 429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    assert.ok(retryAfter > 0 && retryAfter <= 15 * 60, `Retry-After ${retryAfter}`);
    assert.match(refused.text, /too many bad tokens from this address/);
    assert.ok(!refused.text.includes(TOKEN));
    assert.equal(
      (await from(guesser, `svc_pat_${'y'.repeat(43)}`, '/api/me')).status,
      429,
      'the API refuses the address too',
    );
    assert.equal((await from(guesser, TOKEN)).status, 200, 'the right token from a locked address still scrapes');
    assert.equal((await from('198.51.100.8', 'a-guess-from-elsewhere')).status, 401, 'another address is not locked');
    const noToken = t.client();
    noToken.address = '198.51.100.9';
    for (let i = 0; i < 35; i++)
      assert.equal((await noToken.get('/metrics')).status, 401, 'no token at all is no guess');

    // The limiter's rows are housekeeping's like every other counter: gone once the lock and window are over.
    const rows = () =>
      t.deps.db.selectFrom('auth_throttle').select('key').where('key', 'like', 'bearer:addr:%').execute();
    assert.equal((await rows()).length, 2);
    t.clock.advance(15 * 60_000 - 1000);
    await housekeepOnce(t.deps);
    assert.equal((await rows()).length, 2, 'kept while the lock and the window still matter');
    assert.equal((await from(guesser, 'still-locked')).status, 429);
    t.clock.advance(1000);
    await housekeepOnce(t.deps);
    assert.deepEqual(await rows(), []);
    assert.equal((await from(guesser, 'a-guess-after-the-lock')).status, 401, 'the address may guess again');
  });

  test('requests are counted by route template, method and status, and logged once each with tokens redacted', async () => {
    const t = buildTestApp(getDb(), { metricsToken: TOKEN });
    await t.client().get('/login/sso/some-provider-slug');
    await t.client().get('/messages/some-message-id'); // a route whose parameter has a pattern: the label drops it
    await t.client().get('/no/such/page');
    await t.client().get('/api/messages/some-message-id'); // refused by the gate before the API (loaded lazily) sees it
    const setup = await t.client().get('/setup?token=very-secret-setup-token');
    const text = await scrape(t);
    assert.equal(sample(text, 'svc_http_requests_total{method="GET",route="/login/sso/:slug",status="404"}'), 1);
    assert.equal(
      sample(text, 'svc_http_requests_total{method="GET",route="/messages/:id",status="303"}'),
      1,
      'the sign-in redirect, under its route',
    );
    // Anonymous: the gate sends a request for a page that does not exist to sign-in, like any other.
    assert.equal(sample(text, 'svc_http_requests_total{method="GET",route="unmatched",status="303"}'), 1);
    assert.equal(
      sample(text, 'svc_http_requests_total{method="GET",route="/api/*",status="401"}'),
      1,
      'an API request without a token',
    );
    assert.equal(
      sample(text, 'svc_http_request_duration_seconds_count{method="GET",route="/login/sso/:slug",status="404"}'),
      1,
    );
    assert.doesNotMatch(text, /some-provider-slug|no\/such|some-message-id/, 'never a raw URL in a label');

    const lines = t.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    const setupLine = lines.find((l) => l.route === '/setup');
    assert.ok(setupLine, 'the setup request is logged');
    assert.equal(setupLine.level, 30, 'at info');
    assert.equal(setupLine.method, 'GET');
    assert.equal(setupLine.status, setup.status);
    assert.equal(typeof setupLine.durationMs, 'number');
    assert.equal(setupLine.requestId, setup.headers.get('x-request-id'));
    assert.equal(setupLine.url, '/setup?token=[redacted]');
    assert.ok(!t.logs.some((l) => l.includes('very-secret-setup-token')), 'the token is in no log line');
    assert.equal(lines.filter((l) => l.route === '/login/sso/:slug').length, 1, 'one line per request');
  });

  test('sign-ins are counted by outcome, with throttle locks from the database and no username in any label', async () => {
    const t = buildTestApp(getDb(), { metricsToken: TOKEN });
    const account = await buildAccount(t, { username: 'metrics-alice' });
    const client = t.client();
    await client.post('/login', { username: account.username, password: account.password });
    for (let i = 0; i < 6; i++)
      await t.client().post('/login', { username: 'metrics-mallory', password: 'wrong-password' });
    const owing = await buildAccount(t, { username: 'metrics-bob' });
    await t.deps.db
      .updateTable('accounts')
      .set({ totp_enabled: 1, totp_secret: 'JBSWY3DPEHPK3PXP' })
      .where('id', '=', owing.id)
      .execute();
    await t.client().post('/login', { username: owing.username, password: owing.password });
    const text = await scrape(t);
    assert.equal(sample(text, 'svc_signins_total{outcome="success"}'), 1);
    assert.equal(sample(text, 'svc_signins_total{outcome="failure"}'), 5);
    assert.equal(sample(text, 'svc_signins_total{outcome="throttled"}'), 1);
    assert.equal(sample(text, 'svc_signins_total{outcome="second_factor_owed"}'), 1);
    assert.equal(sample(text, 'svc_signin_throttle_locks{kind="password:pair"}'), 1);
    assert.doesNotMatch(text, /metrics-(alice|mallory|bob)|127\.0\.0\.1/);
  });

  test('delivery attempts by verdict class, first-attempt delay, due, oldest due, dead and failing channels', async () => {
    const t = buildTestApp(getDb(), { metricsToken: TOKEN });
    rx.answer = (req) => (req.path === '/down' ? { status: 503 } : { status: 200 });
    const up = await buildChannel(t, { url: `${rx.url}/up` });
    const down = await buildChannel(t, { url: `${rx.url}/down` });
    const queuedAt = t.clock.now();
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [up.id, down.id], now: queuedAt });
    t.clock.advance(1500);
    const worker = createDeliveryWorker(t.deps, { outbound: { timeoutMs: 3000, policy: allowTestLoopback } });
    await worker.drain();
    await worker.stop();

    // A due delivery nobody attempts (its channel is not reachable by this test's worker), due for 90 s.
    const idle = await buildChannel(t, { url: 'https://hooks.example.com/idle' });
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [idle.id], now: t.clock.now() - 90_000 });
    const parked = await buildChannel(t, { url: 'https://hooks.example.com/parked' });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [parked.id],
      now: t.clock.now(),
    });
    await t.deps.db
      .updateTable('deliveries')
      .set({ state: 'dead', updated_at: t.clock.now() - 60_000 })
      .where('id', '=', deliveryIds.get(parked.id)!)
      .execute();

    const text = await scrape(t);
    assert.equal(sample(text, 'svc_delivery_attempts_total{verdict="delivered"}'), 1);
    assert.equal(sample(text, 'svc_delivery_attempts_total{verdict="http_5xx"}'), 1);
    assert.equal(sample(text, 'svc_delivery_attempts_total{verdict="no_response"}'), 0);
    assert.equal(sample(text, 'svc_delivery_first_attempt_delay_seconds_count'), 2);
    assert.equal(
      sample(text, 'svc_delivery_first_attempt_delay_seconds_sum'),
      3,
      'two first attempts, each 1.5 s after queueing',
    );
    assert.equal(sample(text, 'svc_deliveries_due'), 1);
    assert.equal(sample(text, 'svc_deliveries_oldest_due_age_seconds'), 90);
    assert.equal(sample(text, 'svc_deliveries_dead'), 1);
    assert.equal(sample(text, 'svc_deliveries_dead_last_hour'), 1);
    assert.equal(sample(text, 'svc_channels_failing'), 1);
    assert.doesNotMatch(text, /hooks\.example\.com|127\.0\.0\.1/, 'no URL in any label');
  });
});
