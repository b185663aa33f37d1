// Plain queries over the outbox (deliveries, each with its attempt log) and the channel counters; no business rules.
import { CompiledQuery, sql, type Insertable, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Dialect } from '../../db/connect.ts';
import type { AttemptLogEntry, DB, DeliveriesTable } from '../../db/schema.ts';

type Q = Kysely<DB> | Transaction<DB>;

/** What a claim asks for. */
export interface ClaimParams {
  owner: string;
  now: number;
  leaseUntil: number;
  /** Most deliveries to claim (the worker's free slots). */
  limit: number;
  /** Most deliveries of one channel in one claim, unless `quotas` says fewer for that channel. */
  perChannel: number;
  /** Channels this worker is already saturating: none of theirs are claimed, so they cannot crowd out others. */
  exclude: string[];
  /** Remaining room for channels this worker already has some attempts in flight to. */
  quotas: Map<string, number>;
  /** How many of the oldest due rows are considered per claim. */
  window: number;
}

/** What one attempt needs: the stored body bytes and the channel's URL and secret, read in the claim's transaction. */
export interface AttemptJob {
  id: string;
  channel_id: string;
  attempts: number;
  body: string;
  url: string;
  secret: string | null;
}

/**
 * The claim: leases the oldest due deliveries of enabled channels, at most `quota` per channel, at most `limit` in all.
 * A row whose lease has expired (its worker died) is due again. Its text is fixed (the excluded channels and the
 * quotas are one array or JSON parameter each), so it is parsed and planned once, not once per claim.
 * PostgreSQL: its parameters start after `offset` others (the recording statement's, when both go in one), and rows
 * being recorded by the same statement are never candidates (a row may not be updated twice in one statement). Those
 * are leased, so only a row whose lease has run out is compared with them: the array is not scanned for every row.
 * SQLite does the same in three statements inside one immediate transaction (see claimJobsIn).
 * A lease changes no indexed column (not even updated_at), so on PostgreSQL the update can stay on its page (HOT) and
 * writes no index entry; the deliveries table leaves room in its pages for that (migration 0010).
 */
function claimStatement(offset = 0): string {
  const p = (n: number) => `$${n + offset}`;
  return `
    update deliveries set lease_owner = ${p(1)}, lease_until = ${p(2)}
    where id = any(array(
      select r.id from (
        select c.id, c.channel_id, c.next_attempt_at,
               row_number() over (partition by c.channel_id order by c.next_attempt_at) as rn
        from (
          select d.id, d.channel_id, d.next_attempt_at
          from deliveries d join channels ch on ch.id = d.channel_id
          where d.state = 'pending' and d.next_attempt_at <= ${p(3)}
            and (d.lease_until is null or (d.lease_until <= ${p(3)} and d.id <> all(${p(9)}::text[])))
            and ch.enabled = 1
            and d.channel_id <> all(${p(4)}::text[])
          order by d.next_attempt_at
          limit ${p(5)}
          for update of d skip locked
        ) c
      ) r
      where r.rn <= coalesce((${p(6)}::jsonb ->> r.channel_id)::int, ${p(7)}::int)
      order by r.next_attempt_at
      limit ${p(8)}
    ))
    returning id, message_id, channel_id, attempts, next_attempt_at`;
}
// SQLite: the oldest due rows of enabled, not excluded channels, read in order from the due index (no sort). With
// statistics SQLite may prefer scanning the channels and then all of their deliveries plus a sort; INDEXED BY and
// CROSS JOIN (which fixes the join order) keep the ordered plan, which stops after the window.
const CANDIDATES_SQLITE = `
  select d.id, d.channel_id
  from deliveries d indexed by deliveries_due cross join channels ch on ch.id = d.channel_id
  where d.state = 'pending' and d.next_attempt_at <= ? and (d.lease_until is null or d.lease_until <= ?)
    and ch.enabled = 1 and d.channel_id not in (select value from json_each(?))
  order by d.next_attempt_at
  limit ?`;
// Inside the claim's immediate transaction the candidates cannot change; the conditions repeat the candidates' anyway.
const LEASE_SQLITE = `
  update deliveries set lease_owner = ?, lease_until = ?
  where id in (select value from json_each(?)) and state = 'pending' and (lease_until is null or lease_until <= ?)`;
// PostgreSQL: = any(array(...)) runs the selection once and updates by primary key (a plain IN would be planned as a
// hash join over a scan of the whole deliveries table); FOR UPDATE SKIP LOCKED makes concurrent workers take different
// rows, and the jobs are read in the same statement.
const claimedJobsPg = (offset: number) => `
  claimed as (${claimStatement(offset)}),
  jobs as (
    select c.id, c.channel_id, c.attempts, m.body, ch.url, ch.secret, c.next_attempt_at as due
    from claimed c join messages m on m.id = c.message_id join channels ch on ch.id = c.channel_id
  )`;
const CLAIM_PG = `with ${claimedJobsPg(0)} select * from jobs`;

/**
 * PostgreSQL settings of the session the worker claims on (see openPostgresSession). PostgreSQL plans the candidates
 * as an ordered scan of deliveries_due that stops after the window only when it believes many rows are due. Without
 * column statistics (a fresh database, before autovacuum's first ANALYZE) it guesses a handful and plans a bitmap scan
 * of EVERY due row plus a sort (10-20 ms for 8,000 due rows, not 0.2 ms); with statistics and a small table it picks a
 * sequential scan plus a sort. With bitmap and sequential scans off for the session, the plan reads the due index in
 * order whatever the statistics; every other table the worker's statements read has a primary-key index.
 * (enable_sort = off would say the same more directly, but inflates the cost of every plan with a sort, which the
 * claim needs above the candidates, past jit_above_cost.) A session setting rather than SET LOCAL per claim: no
 * transaction and three round trips fewer per claim.
 */
export const CLAIM_SESSION_SETTINGS: Record<string, string> = { enable_bitmapscan: 'off', enable_seqscan: 'off' };

// SQLite: what the leased rows' attempts need, read in the claim's (immediate) transaction, in candidate (due) order.
const JOBS_SQLITE = `
  select d.id, d.channel_id, d.attempts, m.body, ch.url, ch.secret
  from json_each(?) j join deliveries d on d.id = j.value join messages m on m.id = d.message_id join channels ch on ch.id = d.channel_id
  order by j.key`;

/** The PostgreSQL claim statement's parameters in its order. */
function claimParameters(p: ClaimParams, recording: string[] = []): unknown[] {
  return [p.owner, p.leaseUntil, p.now, p.exclude, p.window, JSON.stringify(Object.fromEntries(p.quotas)), p.perChannel, p.limit, recording];
}

/** SQLite: the candidate query's parameters. */
function candidateParameters(p: ClaimParams): unknown[] {
  return [p.now, p.now, JSON.stringify(p.exclude), p.window];
}

/**
 * SQLite: the claim inside the caller's (immediate) transaction: the window of oldest due candidates, then the quotas
 * (oldest first), then the lease and the jobs' bodies, URLs and secrets. No other writer can run in between.
 */
export async function claimJobsIn(trx: Q, p: ClaimParams): Promise<AttemptJob[]> {
  const candidates = (await trx.executeQuery<{ id: string; channel_id: string }>(CompiledQuery.raw(CANDIDATES_SQLITE, candidateParameters(p)))).rows;
  const taken = new Map<string, number>();
  const ids: string[] = [];
  for (const c of candidates) {
    if (ids.length >= p.limit) break;
    const n = taken.get(c.channel_id) ?? 0;
    if (n >= (p.quotas.get(c.channel_id) ?? p.perChannel)) continue;
    taken.set(c.channel_id, n + 1);
    ids.push(c.id);
  }
  if (ids.length === 0) return [];
  const json = JSON.stringify(ids);
  await trx.executeQuery(CompiledQuery.raw(LEASE_SQLITE, [p.owner, p.leaseUntil, json, p.now]));
  return (await trx.executeQuery<AttemptJob>(CompiledQuery.raw(JOBS_SQLITE, [json]))).rows;
}

/**
 * Leases due deliveries (see claimStatement) and returns what their attempts need. On PostgreSQL `db` should be a
 * session opened with CLAIM_SESSION_SETTINGS (the ordered plan); on another it is just as correct.
 */
export async function claimJobs(db: Kysely<DB>, dialect: Dialect, p: ClaimParams): Promise<AttemptJob[]> {
  if (dialect === 'postgres') return (await recordAndClaimPg(db, [], p.owner, p.now, p)).jobs;
  return db.transaction().execute((trx) => claimJobsIn(trx, p));
}

/**
 * The claim's query plan for `p` (EXPLAIN, nothing executed) on `db`'s session, one line per plan node. On PostgreSQL,
 * `generic` shows the plan for any parameters, which a prepared statement uses after its first executions.
 */
export async function claimPlan(db: Kysely<DB>, dialect: Dialect, p: ClaimParams, generic = false): Promise<string[]> {
  if (dialect === 'postgres') return postgresPlan(db, CLAIM_PG, claimParameters(p), generic);
  const rows = (await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${CANDIDATES_SQLITE}`, candidateParameters(p)))).rows;
  return rows.map((r) => r.detail);
}

/** PostgreSQL: the plan of the worker's recording-and-claiming statement for these parameters (see claimPlan). */
export function recordAndClaimPlan(db: Kysely<DB>, records: AttemptRecord[], owner: string, now: number, claim: ClaimParams, generic = false): Promise<string[]> {
  const ids = records.map((r) => r.id);
  const params = [...recordParameters(records, ids, owner, now), ...claimParameters(claim, ids)];
  return postgresPlan(db, RECORD_AND_CLAIM_PG, params, generic);
}

async function postgresPlan(db: Kysely<DB>, text: string, params: unknown[], generic: boolean): Promise<string[]> {
  const explain = async (q: Q, sqlText: string, values: unknown[] = []) => (await q.executeQuery<{ 'QUERY PLAN': string }>(CompiledQuery.raw(sqlText, values))).rows.map((r) => r['QUERY PLAN']);
  if (!generic) return explain(db, `explain ${text}`, params);
  return db.connection().execute(async (conn) => {
    const name = `worker_plan_${Date.now().toString(36)}`;
    await conn.executeQuery(CompiledQuery.raw(`prepare ${name} as ${text}`));
    try {
      return await conn.transaction().execute(async (trx) => {
        await trx.executeQuery(CompiledQuery.raw('set local plan_cache_mode = force_generic_plan'));
        // EXECUTE inside EXPLAIN takes no bound parameters: the values go in as literals (ids are base64url, numbers are numbers).
        const literal = (v: unknown) => (typeof v === 'number' ? String(v) : `'${(Array.isArray(v) ? `{${v.join(',')}}` : String(v)).replaceAll("'", "''")}'`);
        return explain(trx, `explain execute ${name}(${params.map(literal).join(', ')})`);
      });
    } finally {
      await conn.executeQuery(CompiledQuery.raw(`deallocate ${name}`));
    }
  });
}

/** One finished attempt of a batch, as the set-based recording statements take it. */
export interface AttemptRecord {
  /** Position in the batch: channel counters follow the verdicts in this order. */
  n: number;
  /** The delivery. */
  id: string;
  channel_id: string;
  /** The attempt's number, 1 to 5: its delivery's attempts so far, this one included. */
  attempt_no: number;
  verdict: 'delivered' | 'failed';
  /** The delivery's new state, and its next attempt time (null: unchanged, for a delivered one). */
  state: 'delivered' | 'pending' | 'dead';
  next_attempt_at: number | null;
  started_at: number;
  status_code: number | null;
  error: string | null;
}

/** A channel's verdicts in one batch: whether any succeeded, the failures after the last success, the last error. */
export interface ChannelTally {
  id: string;
  succeeded: 0 | 1;
  failures: number;
  error: string | null;
}

// SQLite: each statement takes the whole batch as one JSON parameter, so its text (and prepared statement) never
// varies with the batch size. Rows are found by primary key, driven by the JSON rows. The attempt joins the end of its
// delivery's attempt log in the same update.
const SQLITE_CLOSE = `
  update deliveries set state = j.state, attempts = j.attempt_no, next_attempt_at = coalesce(j.next_attempt_at, deliveries.next_attempt_at),
    delivered_at = case when j.verdict = 'delivered' then ? end, last_error = j.error, updated_at = ?, lease_owner = null, lease_until = null,
    attempt_log = json_insert(deliveries.attempt_log, '$[#]', json_object('attempt_no', j.attempt_no, 'started_at', j.started_at,
      'finished_at', ?, 'verdict', j.verdict, 'status_code', j.status_code, 'error', j.error))
  from (select value ->> 'id' as id, value ->> 'state' as state, value ->> 'attempt_no' as attempt_no, value ->> 'next_attempt_at' as next_attempt_at,
               value ->> 'verdict' as verdict, value ->> 'started_at' as started_at, value ->> 'status_code' as status_code,
               value ->> 'error' as error from json_each(?)) j
  where deliveries.id = j.id and deliveries.lease_owner = ?
  returning deliveries.id`;
const SQLITE_CHANNELS = `
  update channels set
    consecutive_failures = case when j.succeeded = 1 then j.failures else channels.consecutive_failures + j.failures end,
    last_success_at = case when j.succeeded = 1 then ? else channels.last_success_at end,
    last_error = case when j.failures > 0 then j.error else channels.last_error end,
    last_error_at = case when j.failures > 0 then ? else channels.last_error_at end
  from (select value ->> 'id' as id, value ->> 'succeeded' as succeeded, value ->> 'failures' as failures, value ->> 'error' as error from json_each(?)) j
  where channels.id = j.id
    and (j.succeeded = 0 or j.failures > 0 or channels.consecutive_failures <> 0 or channels.last_success_at is null or channels.last_success_at < ? - 1000)`;

/**
 * SQLite: records the attempts on their delivery rows (only those `owner` still holds; holding the lease implies
 * pending) in one statement: new state, attempt log, lease given back; returns the ids it recorded.
 */
export async function closeDeliveries(db: Q, records: AttemptRecord[], owner: string, now: number): Promise<Set<string>> {
  const result = await db.executeQuery<{ id: string }>(CompiledQuery.raw(SQLITE_CLOSE, [now, now, now, JSON.stringify(records), owner]));
  return new Set(result.rows.map((r) => r.id));
}

/**
 * SQLite: every channel's counters after a batch, in one statement: a success resets the streak (then the failures
 * after it count), failures alone extend it; a success alone refreshes last_success_at at most once a second.
 */
export async function updateChannelTallies(db: Q, tallies: ChannelTally[], now: number): Promise<void> {
  if (tallies.length > 0) await db.executeQuery(CompiledQuery.raw(SQLITE_CHANNELS, [now, now, JSON.stringify(tallies), now]));
}

// PostgreSQL: the whole batch in ONE statement (atomic without a transaction, one round trip): record the held
// deliveries (state, attempt log) and fold their verdicts, in batch order, into each channel's counters.
// Each attempt's log entry arrives as JSON text (attemptEntry) and joins the end of the log's text, so the log is never
// parsed: a log holds either no entry ('[]') or objects, and ends with its closing bracket (whitespace after it is cut).
// The id arrays make both updates find rows by primary key (a join with the JSON rows alone may be planned as a scan).
// The deliveries update has no `state = 'pending'` term (holding the lease implies pending: every change of state
// clears it): with one, and no statistics yet, the planner chose the due index and walked every pending row.
const RECORD_PG = `
  j as (
    select * from jsonb_to_recordset($1::jsonb) as x(n int, id text, channel_id text, attempt_no int, verdict text,
      state text, next_attempt_at bigint, error text, entry text)
  ), upd as (
    update deliveries d set state = j.state, attempts = j.attempt_no, next_attempt_at = coalesce(j.next_attempt_at, d.next_attempt_at),
      delivered_at = case when j.verdict = 'delivered' then $3::bigint end, last_error = j.error, updated_at = $3::bigint,
      lease_owner = null, lease_until = null,
      attempt_log = case when strpos(d.attempt_log, '{') = 0 then '[' || j.entry || ']' else left(rtrim(d.attempt_log, E' \\t\\r\\n'), -1) || ',' || j.entry || ']' end
    from j
    where d.id = any($4::text[]) and d.id = j.id and d.lease_owner = $2
    returning d.id
  ), held as (
    select j.* from j join upd on upd.id = j.id
  ), tally as (
    select channel_id, bool_or(verdict = 'delivered') as succeeded,
      count(*) filter (where verdict = 'failed' and n > coalesce(last_ok, -1)) as failures,
      (array_agg(error order by n desc) filter (where verdict = 'failed'))[1] as error
    from (select held.*, max(n) filter (where verdict = 'delivered') over (partition by channel_id) as last_ok from held) h
    group by channel_id
  ), counters as (
    update channels c set
      consecutive_failures = case when t.succeeded then t.failures else c.consecutive_failures + t.failures end,
      last_success_at = case when t.succeeded then $3::bigint else c.last_success_at end,
      last_error = case when t.failures > 0 then t.error else c.last_error end,
      last_error_at = case when t.failures > 0 then $3::bigint else c.last_error_at end
    from tally t
    where c.id = any($5::text[]) and c.id = t.channel_id
      and (not t.succeeded or t.failures > 0 or c.consecutive_failures <> 0 or c.last_success_at is null or c.last_success_at < $3::bigint - 1000)
  )`;

/** One attempt's entry in its delivery's attempt log (an AttemptLogEntry), as JSON text. */
export function attemptEntry(r: AttemptRecord, finishedAt: number): string {
  const entry: AttemptLogEntry = { attempt_no: r.attempt_no, started_at: r.started_at, finished_at: finishedAt, verdict: r.verdict, status_code: r.status_code, error: r.error };
  return JSON.stringify(entry);
}

/** RECORD_PG's five parameters: the batch (as JSON rows, each with its log entry), the owner, the time, the batch's ids, its channels. */
function recordParameters(records: AttemptRecord[], ids: string[], owner: string, now: number): unknown[] {
  const rows = records.map((r) => ({ n: r.n, id: r.id, channel_id: r.channel_id, attempt_no: r.attempt_no, verdict: r.verdict, state: r.state, next_attempt_at: r.next_attempt_at, error: r.error, entry: attemptEntry(r, now) }));
  return [JSON.stringify(rows), owner, now, ids, [...new Set(records.map((r) => r.channel_id))]];
}
const RECORD_ONLY_PG = `with ${RECORD_PG} select count(*)::int as recorded from upd`;
// The recording and the next claim in one statement: one round trip and one commit for both. All its parts see one
// snapshot, in which the rows being recorded are still leased (so not due) and are excluded from the candidates anyway.
const RECORD_AND_CLAIM_PG = `
  with ${RECORD_PG}, ${claimedJobsPg(5)}
  select id, channel_id, attempts, body, url, secret, due, null::int as recorded from jobs
  union all select null, null, null, null, null, null, null, count(*)::int from upd`;

/** What a recording (and claim) did: how many deliveries the owner still held and recorded, and the jobs it claimed. */
export interface RecordAndClaimResult {
  recorded: number;
  jobs: AttemptJob[];
}

/**
 * PostgreSQL: records a batch (see RECORD_PG; only deliveries `owner` still holds) and, with `claim`, leases the next
 * deliveries, in one statement. For the claim's ordered plan `db` should be a CLAIM_SESSION_SETTINGS session.
 */
export async function recordAndClaimPg(db: Q, records: AttemptRecord[], owner: string, now: number, claim?: ClaimParams): Promise<RecordAndClaimResult> {
  const ids = records.map((r) => r.id);
  const record = recordParameters(records, ids, owner, now);
  if (!claim) {
    if (records.length === 0) return { recorded: 0, jobs: [] };
    const result = await db.executeQuery<{ recorded: number }>(CompiledQuery.raw(RECORD_ONLY_PG, record));
    return { recorded: result.rows[0]!.recorded, jobs: [] };
  }
  type Row = AttemptJob & { due: number | null; recorded: number | null };
  const rows =
    records.length === 0
      ? (await db.executeQuery<Row>(CompiledQuery.raw(CLAIM_PG, claimParameters(claim)))).rows
      : (await db.executeQuery<Row>(CompiledQuery.raw(RECORD_AND_CLAIM_PG, [...record, ...claimParameters(claim, ids)]))).rows;
  let recorded = 0;
  const claimed: Row[] = [];
  for (const row of rows) {
    if (row.recorded === null || row.recorded === undefined) claimed.push(row);
    else recorded = row.recorded;
  }
  // Oldest due first, as the worker starts them (the statement's output order is not defined).
  claimed.sort((a, b) => a.due! - b.due!);
  const jobs = claimed.map((r): AttemptJob => ({ id: r.id, channel_id: r.channel_id, attempts: r.attempts, body: r.body, url: r.url, secret: r.secret }));
  return { recorded, jobs };
}

/** Gives leases back without an attempt (the worker stopped before a verdict, or never started it): due again at once. */
export async function releaseLeases(db: Q, ids: string[], owner: string): Promise<void> {
  if (ids.length === 0) return;
  await db
    .updateTable('deliveries')
    .set({ lease_owner: null, lease_until: null })
    .where('id', 'in', ids)
    .where('lease_owner', '=', owner)
    .where('state', '=', 'pending')
    .execute();
}

/**
 * Pending deliveries whose channel was deleted or disabled are never sent: they become `cancelled` with
 * the reason. Rows leased to a worker are left to finish their attempt first.
 */
export async function cancelUndeliverable(db: Q, now: number): Promise<number> {
  const free = (eb: any) => eb.or([eb('lease_until', 'is', null), eb('lease_until', '<=', now)]);
  const deleted = await db
    .updateTable('deliveries')
    .set({ state: 'cancelled', last_error: 'channel deleted', updated_at: now, lease_owner: null, lease_until: null })
    .where('channel_id', 'is', null)
    .where('state', '=', 'pending')
    .where(free)
    .executeTakeFirst();
  const disabled = await db
    .updateTable('deliveries')
    .set({ state: 'cancelled', last_error: 'channel disabled', updated_at: now, lease_owner: null, lease_until: null })
    .where('channel_id', 'in', (eb) => eb.selectFrom('channels').select('id').where('enabled', '=', 0))
    .where('state', '=', 'pending')
    .where(free)
    .executeTakeFirst();
  return Number(deleted.numUpdatedRows) + Number(disabled.numUpdatedRows);
}

/** A delivery with its channel's URL (null once deleted), enabled flag, and whether a later re-send replaced it. */
export type DeliveryWithChannel = Selectable<DeliveriesTable> & { channel_url: string | null; channel_enabled: number | null; superseded: number };

/** Deliveries of a message, undelivered first (dead, pending, cancelled, then delivered), oldest series first within each. */
export function deliveriesOfMessage(db: Q, messageId: string, limit: number): Promise<DeliveryWithChannel[]> {
  return db
    .selectFrom('deliveries as d')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .selectAll('d')
    .select(['c.url as channel_url', 'c.enabled as channel_enabled'])
    .select((eb) =>
      eb
        .case()
        .when(
          eb.exists(
            eb
              .selectFrom('deliveries as later')
              .select('later.id')
              .whereRef('later.message_id', '=', 'd.message_id')
              .whereRef('later.channel_id', '=', 'd.channel_id')
              .whereRef('later.created_at', '>', 'd.created_at'),
          ),
        )
        .then(1)
        .else(0)
        .end()
        .as('superseded'),
    )
    .where('d.message_id', '=', messageId)
    .orderBy(sql`case d.state when 'dead' then 0 when 'pending' then 1 when 'cancelled' then 2 else 3 end`)
    .orderBy('d.created_at')
    .orderBy('d.id')
    .limit(limit)
    .execute() as Promise<DeliveryWithChannel[]>;
}

/** How many deliveries of a message are in each state (one grouped count over that message's rows only). */
export async function countDeliveriesOfMessage(db: Q, messageId: string): Promise<Record<DeliveriesTable['state'], number>> {
  const rows = await db
    .selectFrom('deliveries')
    .select((eb) => ['state', eb.fn.countAll<number | string>().as('n')])
    .where('message_id', '=', messageId)
    .groupBy('state')
    .execute();
  const counts = { pending: 0, delivered: 0, dead: 0, cancelled: 0 };
  for (const r of rows) counts[r.state] = Number(r.n);
  return counts;
}

/** A delivery's attempts, oldest first, from its attempt log. */
export function attemptLog(row: Pick<Selectable<DeliveriesTable>, 'attempt_log'>): AttemptLogEntry[] {
  return JSON.parse(row.attempt_log) as AttemptLogEntry[];
}

/** Dead-lettered and cancelled deliveries that no later series replaced, newest first, with their message headline. */
export function undeliveredLatest(db: Q, limit: number) {
  return db
    .selectFrom('deliveries as d')
    .innerJoin('messages as m', 'm.id', 'd.message_id')
    .leftJoin('channels as c', 'c.id', 'd.channel_id')
    .select(['d.id', 'd.message_id', 'd.channel_id', 'd.state', 'd.attempts', 'd.last_error', 'd.updated_at', 'm.headline', 'c.url as channel_url', 'c.enabled as channel_enabled'])
    // Literal states, so the planner (SQLite's too) can use the partial index deliveries_undelivered.
    .where(sql<boolean>`d.state in ('dead', 'cancelled')`)
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom('deliveries as later')
            .select('later.id')
            .whereRef('later.message_id', '=', 'd.message_id')
            .whereRef('later.channel_id', '=', 'd.channel_id')
            .whereRef('later.created_at', '>', 'd.created_at'),
        ),
      ),
    )
    .orderBy('d.updated_at', 'desc')
    .orderBy('d.id')
    .limit(limit)
    .execute();
}

/** One delivery by id; on PostgreSQL row-locked for the rest of the transaction. */
export function findDeliveryForUpdate(db: Q, dialect: Dialect, id: string): Promise<Selectable<DeliveriesTable> | undefined> {
  return db
    .selectFrom('deliveries')
    .selectAll()
    .where('id', '=', id)
    .$if(dialect === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
}

/** Whether a later series (a re-send) of the same message to the same channel exists. */
export async function laterSeriesExists(db: Q, d: Pick<DeliveriesTable, 'message_id' | 'channel_id' | 'created_at'>): Promise<boolean> {
  const row = await db
    .selectFrom('deliveries')
    .select('id')
    .where('message_id', '=', d.message_id)
    .where('channel_id', '=', d.channel_id)
    .where('created_at', '>', d.created_at)
    .executeTakeFirst();
  return row !== undefined;
}

/** Inserts a delivery row (a fresh pending series). */
export async function insertDelivery(db: Q, row: Insertable<DeliveriesTable>): Promise<void> {
  await db.insertInto('deliveries').values(row).execute();
}

/** Reads a channel's enabled flag; undefined when it no longer exists. */
export async function channelEnabled(db: Q, channelId: string): Promise<number | undefined> {
  const row = await db.selectFrom('channels').select('enabled').where('id', '=', channelId).executeTakeFirst();
  return row?.enabled;
}
