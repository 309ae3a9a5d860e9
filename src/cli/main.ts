/**
 * The `livefeed` entry point: commander wiring, then one command run. The only place that ends the
 * process or sets its exit code; commands return exit codes (src/cli/exit.ts).
 */
import { Command, Option } from 'commander';
import {
  type Config,
  databaseSecrets,
  envOnlyOf,
  type Flags,
  flagsOf,
  loadConfig,
  prepareConfig,
} from '../config.js';
import type { CliCommand } from './command.js';
import { COMMANDS } from './commands.js';
import { EXIT, reportError } from './exit.js';
import { VERSION } from './version.js';

const forceExit = (code: number): never => process.exit(code);

/**
 * Loads the command's configuration, then its implementation (src/cli/commands.ts), and runs it;
 * errors become exit codes, with the token and the database password (once known) scrubbed from
 * every message.
 */
async function execute<C>(
  command: CliCommand<C>,
  flags: Flags,
  args: string[],
): Promise<{ code: number; failed: boolean }> {
  const secrets: string[] = [];
  try {
    if (!command.load) await prepareConfig(command.name, flags);
    const config = command.load ? command.load(flags) : (loadConfig(flags, undefined, command.name) as C);
    const { token, db, dbPassword, dbReplicas } = config as Partial<Config>;
    if (token) secrets.push(token);
    secrets.push(...databaseSecrets(db, dbPassword, dbReplicas));
    const implementation = await command.implementation();
    return { code: await implementation.run({ config, flags, args, forceExit }), failed: false };
  } catch (error) {
    return { code: reportError(error, secrets), failed: true };
  }
}

/** Exits with `code` once everything written to stdout and stderr has been handed to the OS. */
function exitWhenDrained(code: number): void {
  let pending = 2;
  const done = () => {
    if (--pending === 0) process.exit(code);
  };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/** Adds `command` to `root`: its own flags, then the config options whose rows name it. */
function register<C>(root: Command, command: CliCommand<C>): void {
  const sub = root.command(command.usage).description(command.description);
  for (const { flag, help, required } of command.flags ?? []) {
    const option = new Option(flag, help);
    sub.addOption(required ? option.makeOptionMandatory() : option);
  }
  for (const { flag, help, repeatable } of flagsOf(command.name)) {
    const option = new Option(flag, help);
    // Each use adds its value: `--db-replica a --db-replica b` gives [a, b].
    if (repeatable) option.argParser((value: string, previous?: string[]) => [...(previous ?? []), value]);
    sub.addOption(option);
  }
  // The options without a flag (secrets, lists), from the same table: under the flags.
  const envOnly = envOnlyOf(command.name);
  if (envOnly.length > 0)
    sub.addHelpText(
      'after',
      `\nRead from the environment only:\n${envOnly.map(({ env, help }) => `  ${env}\n      ${help}`).join('\n')}`,
    );
  sub.action(async (...params: unknown[]) => {
    const { code, failed } = await execute(command, sub.opts(), params.slice(0, -2) as string[]);
    // Long-running commands exit at once (src/cli/command.ts exitAtOnce); the others let stdout drain.
    if (command.exitAtOnce) process.exit(code);
    // A failed command exits once stdout and stderr (its error, pipes are written asynchronously)
    // have drained: a socket its error left open (a PostgreSQL login the driver gave up on is
    // closed by the server only after a minute) must not hold it.
    if (failed) exitWhenDrained(code);
    process.exitCode = code;
  });
}

/** Builds the `livefeed` command line program. */
export function program(): Command {
  const root = new Command('livefeed')
    .description(
      'Keeps a verified local copy of the MusicBrainz live data feed in SQLite or PostgreSQL and serves it over GraphQL.',
    )
    .version(VERSION)
    // Usage errors (unknown flag, missing argument) are configuration errors: exit 2, not 1.
    .exitOverride((error) => process.exit(error.exitCode === 0 ? EXIT.ok : EXIT.config));
  for (const command of COMMANDS) register(root, command);
  return root;
}

await program().parseAsync(process.argv);
