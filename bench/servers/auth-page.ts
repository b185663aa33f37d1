// A bench server child: `bare` (node:http hello world) or the app on `sqlite`/`postgres` with a signed-in viewer.
import { buildTestApp } from '../../test/helpers/app.ts';
import { serveTestApp } from '../../test/helpers/browser.ts';
import { createTestDatabase } from '../../test/helpers/db.ts';
import { buildAccount, signIn } from '../../test/helpers/factories.ts';
import { systemClock } from '../../src/deps.ts';
import { bareServer } from '../helpers.ts';

const kind = process.argv[2];
if (kind === 'bare') {
  const bare = await bareServer();
  process.send!({ url: bare.url });
  process.once('SIGTERM', () => void bare.close().then(() => process.exit(0)));
} else {
  const tdb = await createTestDatabase(kind === 'postgres' ? 'postgres' : 'sqlite');
  const t = buildTestApp(tdb, { logLevel: 'silent' });
  t.clock.t = systemClock.now();
  const viewer = await buildAccount(t, { role: 'viewer' });
  const client = await signIn(t, viewer);
  const server = await serveTestApp(t);
  process.send!({ url: server.url, cookie: [...client.cookies].map(([k, v]) => `${k}=${v}`).join('; ') });
  process.once('SIGTERM', () => void server.close().then(() => tdb.drop()).then(() => process.exit(0)));
}
