// The svc command line: serve | worker | migrate | --help.
import { parseArgs } from 'node:util';
import { runEmit } from './emit.ts';
import { startRuntime } from './runtime.ts';
import { runServe } from './serve.ts';
import { runWorker } from './worker.ts';

const HELP = `Usage: svc <command> [options]

Commands:
  serve [--no-worker]   run the web service (with the delivery worker unless --no-worker)
  worker                run the delivery worker alone (any number may share one database)
  migrate               bring the database schema up to date and exit
  emit --cause ...      store one message (svc emit --help for its flags); prints the message id
  --help                show this help

Configuration is read from environment variables; see README.md.
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(HELP);
    return command === undefined ? 2 : 0;
  }
  switch (command) {
    case 'serve': {
      const { values } = parseArgs({ args: rest, options: { 'no-worker': { type: 'boolean', default: false } }, strict: true });
      const deps = await startRuntime();
      await runServe(deps, { worker: !values['no-worker'] });
      return 0;
    }
    case 'worker': {
      parseArgs({ args: rest, options: {}, strict: true });
      await runWorker(await startRuntime());
      return 0;
    }
    case 'migrate': {
      parseArgs({ args: rest, options: {}, strict: true });
      const deps = await startRuntime();
      deps.log.info('database is up to date');
      await deps.db.destroy();
      return 0;
    }
    case 'emit':
      return runEmit(rest);
    default:
      process.stderr.write(`svc: unknown command "${command}"\n\n${HELP}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`svc: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
