// A real Prometheus (Debian's `prometheus` package) scrapes svc's /metrics with the bearer token; its HTTP API then
// shows the delivery counter, and `promtool check metrics` accepts the exposition. Skipped when Prometheus is absent.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { serve } from '@hono/node-server';
import { createDeliveryWorker } from '../src/features/delivery/delivery.worker.ts';
import { buildTestApp } from './helpers/app.ts';
import { forEachDialect } from './helpers/db.ts';
import { allowTestLoopback, until } from './helpers/delivery.ts';
import { buildChannel, buildMessageWithDeliveries } from './helpers/outbox.ts';
import { useReceiver } from './helpers/receiver.ts';

const PROMETHEUS = '/usr/bin/prometheus';
const PROMTOOL = '/usr/bin/promtool';
const TOKEN = 'prometheus-scrape-token-0123';
const skip =
  fs.existsSync(PROMETHEUS) && fs.existsSync(PROMTOOL)
    ? false
    : `Prometheus is not installed (apt-get install prometheus puts ${PROMETHEUS} and ${PROMTOOL} in place; .ci/run does)`;

/** A loopback port nothing listens on right now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

forEachDialect((getDb) => {
  const receiver = useReceiver();

  test('a real Prometheus scrapes /metrics with the bearer token and sees the delivery counter; promtool accepts the exposition', {
    skip,
  }, async () => {
    const rx = receiver();
    const t = buildTestApp(getDb(), { metricsToken: TOKEN });
    const channel = await buildChannel(t, { url: `${rx.url}/prometheus` });
    await buildMessageWithDeliveries(t.deps.db, { channelIds: [channel.id], now: t.clock.now() });
    const worker = createDeliveryWorker(t.deps, { outbound: { timeoutMs: 3000, policy: allowTestLoopback } });
    await worker.drain();
    await worker.stop();
    assert.equal(rx.received.length, 1);

    const server = serve({ fetch: t.app.fetch, port: 0, hostname: '127.0.0.1' });
    await new Promise<void>((resolve) => server.once('listening', resolve));
    const svcPort = (server.address() as net.AddressInfo).port;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'svc-prometheus-'));
    const promPort = await freePort();
    let log = '';
    const prometheus = (() => {
      fs.writeFileSync(
        path.join(dir, 'prometheus.yml'),
        [
          'global:',
          '  scrape_interval: 1s',
          'scrape_configs:',
          '  - job_name: svc',
          '    scrape_interval: 1s',
          '    scrape_timeout: 1s',
          '    metrics_path: /metrics',
          '    authorization:',
          `      credentials: ${TOKEN}`,
          '    static_configs:',
          `      - targets: ['127.0.0.1:${svcPort}']`,
          '',
        ].join('\n'),
      );
      const args = [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${promPort}`,
        '--log.level=warn',
      ];
      const proc = spawn(PROMETHEUS, args, { stdio: ['ignore', 'pipe', 'pipe'] });
      proc.stdout.on('data', (c: Buffer) => (log += c));
      proc.stderr.on('data', (c: Buffer) => (log += c));
      return proc;
    })();
    try {
      /**
       * One instant query through Prometheus's HTTP API; the first sample's value, undefined when there is none yet.
       */
      const query = async (promql: string): Promise<string | undefined> => {
        const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(promql)}`).catch(
          () => undefined,
        );
        if (!res?.ok) return undefined;
        const body = (await res.json()) as { data: { result: { value: [number, string] }[] } };
        return body.data.result[0]?.value[1];
      };
      await until(async () => (await query('svc_delivery_attempts_total{job="svc",verdict="delivered"}')) === '1', {
        limitMs: 30_000,
        everyMs: 250,
      }).catch(() => {
        throw new Error(`Prometheus never showed the delivery counter; its log:\n${log}`);
      });
      assert.equal(await query('up{job="svc"}'), '1', 'the scrape with the bearer token succeeds');
      assert.equal(await query('svc_ready{job="svc"}'), '1');

      const exposition = await (
        await t.app.request('/metrics', { headers: { authorization: `Bearer ${TOKEN}` } })
      ).text();
      const checked = spawnSync(PROMTOOL, ['check', 'metrics'], { input: exposition, encoding: 'utf8' });
      assert.equal(checked.status, 0, `promtool check metrics:\n${checked.stdout}${checked.stderr}`);

      // The example alert rules in docs/operations.md load in Prometheus, and every svc metric they name is exposed.
      const doc = fs.readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
      const rules = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)]
        .map((m) => m[1]!)
        .find((block) => block.startsWith('groups:'));
      assert.ok(rules, 'docs/operations.md has an alert rules block');
      fs.writeFileSync(path.join(dir, 'rules.yml'), rules);
      const rulesChecked = spawnSync(PROMTOOL, ['check', 'rules', path.join(dir, 'rules.yml')], { encoding: 'utf8' });
      assert.equal(rulesChecked.status, 0, `promtool check rules:\n${rulesChecked.stdout}${rulesChecked.stderr}`);
      for (const name of new Set(rules.match(/\bsvc_[a-z_]+/g))) {
        assert.match(
          exposition,
          new RegExp(`^# TYPE ${name} `, 'm'),
          `the alert rules name ${name}, which /metrics exposes`,
        );
      }
    } finally {
      prometheus.kill('SIGKILL');
      await new Promise((resolve) => server.close(resolve));
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
