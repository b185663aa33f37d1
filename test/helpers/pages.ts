// A "full" store for page checks and screenshots: messages of every cause (long keys and URLs among them), channels
// healthy, failing and disabled, deliveries delivered, pending after failures and dead-lettered, open invitations,
// an SSO provider, and the accounts to look with.
import { newId, systemRandom } from '../../src/deps.ts';
import { mintInvitation } from '../../src/features/team/invitations.service.ts';
import type { TestApp } from './app.ts';
import { buildAccount } from './factories.ts';
import { buildChannel, buildMessage } from './outbox.ts';

/** What the full seed made, for building page paths. */
export interface FullSeed {
  admin: { id: string; username: string; password: string };
  viewer: { id: string; username: string; password: string };
  messageId: string;
  deadMessageId: string;
  channelId: string;
  inviteToken: string;
}

const LONG_URL = `https://hooks.very-long-subdomain-name.example.com/services/T00000000/B00000000/${'X'.repeat(120)}?token=abcdefghijklmnopqrstuvwxyz0123456789`;

/** Fills the store; the two accounts are made here (an admin and a viewer), so sign in with them. */
export async function seedFull(t: TestApp): Promise<FullSeed> {
  const admin = await buildAccount(t, { role: 'admin', username: 'root-admin' });
  const viewer = await buildAccount(t, { role: 'viewer', username: 'vera-viewer' });
  const now = t.clock.now();
  const healthy = await buildChannel(t, {
    createdBy: admin.id,
    url: 'https://hooks.example.com/svc',
    secret: 'whsec-seed',
  });
  const failing = await buildChannel(t, { createdBy: admin.id, url: LONG_URL, classes: 'drift' });
  await buildChannel(t, { createdBy: admin.id, url: 'https://off.example.org/hook', enabled: false });
  await t.deps.db
    .updateTable('channels')
    .set({
      consecutive_failures: 169,
      last_error: 'HTTP 503 from receiver',
      last_error_at: now - 60_000,
      last_success_at: now - 86_400_000,
    })
    .where('id', '=', failing.id)
    .execute();

  const causes = ['drift', 'aperture', 'declared-input', 'threshold'] as const;
  let messageId = '';
  for (let i = 0; i < 12; i++) {
    const cause = i === 11 ? 'drift' : causes[i % causes.length]!;
    messageId = await buildMessage(t, {
      cause,
      sourceId: cause === 'declared-input' ? 'source-1' : undefined,
      seedId: cause === 'aperture' ? 'seed-1' : undefined,
      headline:
        i === 11
          ? `The certificate for api-gateway-internal-${'long'.repeat(12)}.example.com expires in 9 days.`
          : `Message ${i}: something about ${cause} changed.`,
      subject: {
        kind: 'service',
        key:
          i % 3 === 0
            ? `arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/${'k'.repeat(40)}`
            : `web-${i}.example.net`,
      },
      census: i % 2 === 0 ? i * 3 : undefined,
      instant: now - (12 - i) * 3_600_000,
    });
    t.clock.advance(1000);
  }
  // The newest message: delivered to one channel; dead-lettered on the failing one after five attempts.
  const deadMessageId = messageId;
  const deliveries = await t.deps.db
    .selectFrom('deliveries')
    .select(['id', 'channel_id'])
    .where('message_id', '=', deadMessageId)
    .execute();
  for (const d of deliveries) {
    const dead = d.channel_id === failing.id;
    await t.deps.db
      .updateTable('deliveries')
      .set(
        dead
          ? { state: 'dead', attempts: 5, last_error: 'HTTP 503 from receiver', updated_at: t.clock.now() }
          : { state: 'delivered', attempts: 1, delivered_at: t.clock.now() },
      )
      .where('id', '=', d.id)
      .execute();
    for (let n = 1; n <= (dead ? 5 : 1); n++) {
      await t.deps.db
        .insertInto('delivery_attempts')
        .values({
          delivery_id: d.id,
          attempt_no: n,
          started_at: t.clock.now() - (6 - n) * 600_000,
          duration_ms: 120 + n,
          verdict: dead ? 'failed' : 'delivered',
          status_code: dead ? 503 : 204,
          error: dead ? 'HTTP 503 from receiver' : null,
          response_excerpt: dead ? `<html>Service Unavailable ${'z'.repeat(600)}</html>` : null,
        })
        .execute();
    }
  }
  // An older message still failing on the failing channel.
  const failingDelivery = await t.deps.db
    .selectFrom('deliveries')
    .select('id')
    .where('channel_id', '=', failing.id)
    .where('state', '=', 'pending')
    .executeTakeFirst();
  if (failingDelivery)
    await t.deps.db
      .updateTable('deliveries')
      .set({ attempts: 2, last_error: 'connection refused' })
      .where('id', '=', failingDelivery.id)
      .execute();

  const invitation = await mintInvitation(t.deps, {
    actorId: admin.id,
    role: 'viewer',
    note: 'For the on-call engineer',
    base: 'http://localhost',
  });
  if (!invitation.ok) throw new Error('a viewer invitation needs no confirmation');
  // From the command line: a signed-in admin mints an admin invitation only after "Confirm it's you".
  await mintInvitation(t.deps, { actorId: null, role: 'admin', base: 'http://localhost' });
  await t.deps.db
    .insertInto('sso_providers')
    .values({
      id: newId(systemRandom),
      slug: 'acme',
      display_name: 'Acme Identity',
      issuer: 'https://idp.acme.example.com/realms/very-long-realm-name-for-testing',
      client_id: 'svc-client',
      client_secret: 'sso-secret-seed',
      enabled: 1,
      created_at: now,
      updated_at: now,
      created_by: admin.id,
    })
    .execute();
  return {
    admin,
    viewer,
    messageId,
    deadMessageId,
    channelId: healthy.id,
    inviteToken: new URL(invitation.joinLink).searchParams.get('token')!,
  };
}
