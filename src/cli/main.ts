// The svc command line: one table of commands, each with its own --help. Exit codes: 0 done, 1 failed or refused,
// 2 usage error (including an act this setup cannot do).
// Each command's module is imported when that command runs, so `svc emit` or `svc accounts` never loads the web
// application or the delivery worker (half of a short command's start-up time and memory), and none loads a database
// driver before it needs the database (start.ts).
import { parseArgs } from 'node:util';
// Compiled into dist/svc.js by the build, so `svc --version` reads no file and loads nothing.
import pkg from '../../package.json' with { type: 'json' };
import { isDatabaseUnavailable } from '../db/errors.ts';
import { startRuntime } from './start.ts';

/** One command: its line in `svc --help`, its own help, and what it runs (returning the exit code). */
interface Command {
  summary: string;
  help?: string;
  run(args: string[]): Promise<number> | number;
}

const SERVE_HELP = `Usage: svc serve [--no-worker]

Runs the web service, and the delivery worker in the same process unless --no-worker. On SIGTERM or SIGINT it stops
accepting connections, lets requests in flight finish (up to 10 s) and deliveries in flight finish (up to their time
budget), gives back what it had claimed but not started, closes the database and exits 0. A second signal exits at once.
`;

const COMMANDS: Record<string, Command> = {
  serve: {
    summary: 'serve [--no-worker]          run the web service (with the delivery worker unless --no-worker)',
    help: SERVE_HELP,
    async run(args) {
      const { values } = parseArgs({
        args,
        options: { 'no-worker': { type: 'boolean', default: false } },
        strict: true,
      });
      const { runServe } = await import('./serve.ts');
      // The one command besides migrate that creates the database: `npm start` on a fresh machine just works.
      await runServe(await startRuntime({ create: true }), { worker: !values['no-worker'] });
      return 0;
    },
  },
  worker: {
    summary: 'worker                       run the delivery worker alone (any number may share one database)',
    help: 'Usage: svc worker\n\nRuns the delivery worker alone; any number of them may share one database. On SIGTERM or SIGINT it stops\nclaiming, lets deliveries in flight finish (up to their time budget), gives back the rest and exits 0.\n',
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      const { runWorker } = await import('./worker.ts');
      await runWorker(await startRuntime());
      return 0;
    },
  },
  migrate: {
    summary: 'migrate                      bring the database schema up to date and exit',
    help: 'Usage: svc migrate\n\nBrings the database schema up to date and exits (start-up does this too; safe when several instances start at once).\n',
    async run(args) {
      parseArgs({ args, options: {}, strict: true });
      const deps = await startRuntime({ create: true });
      deps.log.info('database is up to date');
      await deps.db.destroy();
      return 0;
    },
  },
  emit: {
    summary: 'emit --cause ...             store one message; prints the message id',
    run: async (args) => (await import('./emit.ts')).runEmit(args),
  },
  invite: {
    summary: 'invite --role admin|viewer   mint an invitation; prints its join link (works with no admin signed in)',
    run: async (args) => (await import('./invite.ts')).runInvite(args),
  },
  accounts: {
    summary:
      'accounts <subcommand>        list accounts; reset a password or second factor, set a role, suspend, reactivate',
    run: async (args) => (await import('./accounts.ts')).runAccounts(args),
  },
  backup: {
    summary: 'backup <file> [--force]      copy the SQLite database safely while svc runs, then check the copy',
    run: async (args) => (await import('./backup.ts')).runBackup(args),
  },
  config: {
    summary: 'config check                 validate the environment; print the settings without secrets',
    run: async (args) => (await import('./config-check.ts')).runConfigCheck(args),
  },
};

const HELP = `Usage: svc <command> [options]

Commands:
${Object.values(COMMANDS)
  .map((c) => `  ${c.summary}\n`)
  .join('')}  --help                       show this help (svc <command> --help: that command's)
  --version                    print the version of svc

Configuration is read from environment variables; see README.md and docs/operations.md. serve and migrate create
the SQLite database when it does not exist; every other command needs an existing one (exit 1 otherwise).
Exit codes: 0 done; 1 failed or refused (nothing changed); 2 usage error: wrong arguments, invalid
configuration, or an act this setup cannot do (backup on PostgreSQL, a backup file that exists without --force).
`;

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(HELP);
    return name === undefined ? 2 : 0;
  }
  if (name === '--version') {
    process.stdout.write(`${pkg.version}\n`);
    return 0;
  }
  const command = Object.hasOwn(COMMANDS, name) ? COMMANDS[name]! : undefined;
  if (!command) {
    process.stderr.write(`svc: unknown command "${name}"\n\n${HELP}`);
    return 2;
  }
  if (command.help && (rest.includes('--help') || rest.includes('-h'))) {
    process.stdout.write(command.help);
    return 0;
  }
  try {
    return await command.run(rest);
  } catch (err) {
    // node:util parseArgs refuses unknown or malformed flags: a usage error, not a failure.
    if (err instanceof TypeError && 'code' in err && String(err.code).startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`svc ${name}: ${err.message}\n(svc ${name} --help shows the usage)\n`);
      return 2;
    }
    throw err;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = (err instanceof Error ? err.message : String(err)).split('\n')[0];
    // The database went away after start-up: one line, exit 1 (a transaction cut short has written nothing).
    process.stderr.write(
      isDatabaseUnavailable(err) ? `svc: the database is unavailable: ${message}\n` : `svc: ${message}\n`,
    );
    process.exit(1);
  },
);
