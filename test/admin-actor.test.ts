// The access gate is not the only guard of an admin act: every admin act's domain function takes its actor and refuses
// one that is not an active administrator itself, so a route left out of the gate's table would still be closed. Each
// function is called here with a viewer (and some with a suspended admin) as actor: refused, and nothing written.
import assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { buildTestApp, type TestApp } from './helpers/app.ts';
import { forEachDialect } from './helpers/db.ts';
import { buildAccount } from './helpers/factories.ts';
import { buildChannel, buildMessageWithDeliveries } from './helpers/outbox.ts';
import { buildInvitation } from './helpers/team-factories.ts';
import { newId, systemRandom } from '../src/deps.ts';
import type { DB } from '../src/db/schema.ts';
import { actorIsAdmin } from '../src/features/auth/admin-actor.ts';
import {
  checkChannelConnection,
  createChannel,
  deleteChannel,
  patchChannel,
  updateChannel,
} from '../src/features/channels/channels.service.ts';
import { resendDeadOfChannel, resendDelivery } from '../src/features/delivery/resend.service.ts';
import { emit } from '../src/features/messages/emit.service.ts';
import { emitOnce } from '../src/features/messages/idempotency.service.ts';
import { setRetentionDays } from '../src/features/messages/retention.service.ts';
import {
  changeProvider,
  changeProviderSecret,
  createProvider,
  removeIdentity,
  removeProvider,
} from '../src/features/sso/sso.providers.service.ts';
import { mintInvitation, revokeInvitation } from '../src/features/team/invitations.service.ts';
import {
  changeRole,
  mintResetLink,
  reactivateAccount,
  reassignAuthored,
  reenrolSecondFactor,
  removeAccount,
  signOutEverywhere,
  suspendAccount,
} from '../src/features/team/team.service.ts';
import { createToken } from '../src/features/tokens/tokens.service.ts';

/** Every table an admin act could write. */
const WRITTEN: (keyof DB)[] = [
  'accounts',
  'sessions',
  'recovery_codes',
  'password_resets',
  'invitations',
  'channels',
  'deliveries',
  'messages',
  'sso_providers',
  'sso_identities',
  'meta',
  'api_idempotency',
];
const CLEARED = [
  'sessions',
  'recovery_codes',
  'api_tokens',
  'password_resets',
  'invitations',
  'delivery_attempts',
  'deliveries',
  'api_idempotency',
  'messages',
  'channels',
  'sso_identities',
  'sso_providers',
  'auth_throttle',
  'accounts',
] as const;

/** Acts that need "Confirm it's you" or a writing token of an active account before anything else. */
const CONFIRMING = new Set(['promote', 'mintResetLink', 'mintAdminInvitation']);

forEachDialect((getDb) => {
  let t: TestApp;
  beforeEach(async () => {
    for (const table of CLEARED) await getDb().db.deleteFrom(table).execute();
    await getDb().db.deleteFrom('meta').where('key', 'like', '%retention%').execute();
    t = buildTestApp(getDb());
  });

  /** Every row of every table an act could write, ordered, to compare before and after. */
  const snapshot = async () => {
    const all: Record<string, unknown[]> = {};
    for (const table of WRITTEN) {
      const rows = (await t.deps.db.selectFrom(table).selectAll().execute()) as Record<string, unknown>[];
      all[table] = rows.map((r) => JSON.stringify(r)).sort();
    }
    return all;
  };

  /**
   * The world every act is tried on: another admin, a suspended viewer, an invitation, a channel with a dead letter, a
   * provider with a linked identity.
   */
  const world = async () => {
    const admin = await buildAccount(t, { username: 'Ada', role: 'admin' });
    const other = await buildAccount(t, { username: 'Otto', role: 'admin' });
    const idle = await buildAccount(t, { username: 'Ida' });
    await t.deps.db.updateTable('accounts').set({ suspended_at: t.clock.now() }).where('id', '=', idle.id).execute();
    const invitation = await buildInvitation(t, admin.id);
    const channel = await buildChannel(t, { createdBy: admin.id });
    const { deliveryIds } = await buildMessageWithDeliveries(t.deps.db, {
      channelIds: [channel.id],
      now: t.clock.now(),
    });
    const dead = deliveryIds.get(channel.id)!;
    await t.deps.db.updateTable('deliveries').set({ state: 'dead' }).where('id', '=', dead).execute();
    const provider = newId(systemRandom);
    const now = t.clock.now();
    await t.deps.db
      .insertInto('sso_providers')
      .values({
        id: provider,
        display_name: 'IdP',
        slug: 'idp',
        issuer: 'https://idp.example.com',
        client_id: 'svc',
        client_secret: null,
        enabled: 1,
        created_at: now,
        updated_at: now,
        created_by: admin.id,
      })
      .execute();
    const identity = newId(systemRandom);
    await t.deps.db
      .insertInto('sso_identities')
      .values({
        id: identity,
        provider_id: provider,
        sub: 'sub-1',
        account_id: other.id,
        label: 'otto',
        linked_at: now,
      })
      .execute();
    return { admin, other, idle, invitation, channel, dead, provider, identity };
  };

  /** Every admin act, as `actorId` would do it (a writing token of its own, so the confirmation rules are met). */
  const everyAct = async (w: Awaited<ReturnType<typeof world>>, actorId: string) => {
    const { id: tokenId } = await createToken(t.deps, actorId, { name: `t-${newId(systemRandom)}`, expiry: 'never' });
    const actor = { actorId };
    const viaToken = { actorId, via: 'token', tokenId } as const;
    const base = 'http://localhost';
    const message = { cause: 'drift', subject: { kind: 'service', key: 'api' }, headline: 'The service moved.' };
    const change = {
      id: w.channel.id,
      url: 'https://hooks.example.com/changed',
      classes: ['drift'],
      enabled: true,
      secret: '',
      clearSecret: false,
    };
    return {
      changeRole: await changeRole(t.deps, { ...viaToken, targetId: w.other.id, role: 'viewer' }),
      promote: await changeRole(t.deps, { ...viaToken, targetId: w.idle.id, role: 'admin' }),
      reenrolSecondFactor: await reenrolSecondFactor(t.deps, { ...actor, targetId: w.other.id }),
      suspendAccount: await suspendAccount(t.deps, { ...actor, accountId: w.other.id }),
      reactivateAccount: await reactivateAccount(t.deps, { ...actor, accountId: w.idle.id }),
      removeAccount: await removeAccount(t.deps, { ...actor, targetId: w.idle.id, confirmation: 'Ida' }),
      signOutEverywhere: await signOutEverywhere(t.deps, { ...actor, accountId: w.other.id }),
      reassignAuthored: await reassignAuthored(t.deps, { ...actor, fromId: w.admin.id, toId: w.other.id }),
      mintResetLink: await mintResetLink(t.deps, { ...viaToken, accountId: w.other.id, base }),
      mintViewerInvitation: await mintInvitation(t.deps, { ...actor, role: 'viewer', base }),
      mintAdminInvitation: await mintInvitation(t.deps, { ...viaToken, role: 'admin', base }),
      revokeInvitation: await revokeInvitation(t.deps, actor, w.invitation),
      createChannel: await createChannel(t.deps, actor, {
        url: 'https://hooks.example.com/new',
        classes: ['drift'],
        secret: '',
      }),
      updateChannel: await updateChannel(t.deps, actor, change),
      patchChannel: await patchChannel(t.deps, actor, w.channel.id, { enabled: false }),
      deleteChannel: await deleteChannel(t.deps, actor, w.channel.id),
      checkChannelConnection: await checkChannelConnection(t.deps, actor, w.channel.id),
      resendDelivery: await resendDelivery(t.deps, actor, w.dead),
      resendDeadOfChannel: await resendDeadOfChannel(t.deps, actor, w.channel.id),
      createProvider: await createProvider(t.deps, actor, {
        display_name: 'New',
        slug: 'new',
        issuer: 'https://new.example.com',
        client_id: 'svc',
      }),
      changeProvider: await changeProvider(t.deps, actor, { id: w.provider, display_name: 'Renamed' }),
      changeProviderSecret: await changeProviderSecret(t.deps, actor, {
        id: w.provider,
        client_secret: 'new-secret',
        clear_secret: false,
      }),
      removeProvider: await removeProvider(t.deps, actor, w.provider),
      removeIdentity: await removeIdentity(t.deps, actor, w.identity),
      setRetentionDays: await setRetentionDays(t.deps, actor, 30),
      emit: await emit(t.deps, actor, { ...message, instant: t.clock.now() }),
      emitOnce: await emitOnce(t.deps, {
        actorId,
        key: `k-${newId(systemRandom)}`,
        request: message,
        answer: () => ({ status: 201, response: '{}' }),
      }),
    };
  };

  test('a viewer is refused by every admin act itself, and nothing is written', async () => {
    const w = await world();
    const viewer = await buildAccount(t, { username: 'Vic' });
    const before = await snapshot();
    const results = await everyAct(w, viewer.id);
    for (const [act, result] of Object.entries(results))
      assert.deepEqual(result, { ok: false, reason: 'not-admin' }, act);
    assert.deepEqual(await snapshot(), before, 'nothing was written');
  });

  test('so is a suspended administrator; an active one is let through (the same calls act)', async () => {
    const w = await world();
    const suspended = await buildAccount(t, { username: 'Sam', role: 'admin' });
    await t.deps.db
      .updateTable('accounts')
      .set({ suspended_at: t.clock.now() })
      .where('id', '=', suspended.id)
      .execute();
    assert.equal(await actorIsAdmin(t.deps, { actorId: suspended.id }), false);
    assert.equal(await actorIsAdmin(t.deps, { actorId: 'no-such-account' }), false);
    assert.equal(await actorIsAdmin(t.deps, { actorId: null }), true, 'the host command line');
    const before = await snapshot();
    const refused = await everyAct(w, suspended.id);
    for (const [act, result] of Object.entries(refused)) {
      // The acts that hand out lasting access check the credential first: a suspended account's token proves nothing.
      const reason = CONFIRMING.has(act) ? 'reauth-required' : 'not-admin';
      assert.deepEqual(result, { ok: false, reason }, act);
    }
    assert.deepEqual(await snapshot(), before, 'nothing was written');

    // The same calls by an active administrator are not refused for their actor (each does its act or meets its own
    // rule).
    const acted = await everyAct(w, w.admin.id);
    for (const [act, result] of Object.entries(acted)) {
      assert.ok(result.ok || result.reason !== 'not-admin', `${act}: ${JSON.stringify(result)}`);
    }
    assert.notDeepEqual(await snapshot(), before, 'an administrator’s acts wrote');
  });
});
