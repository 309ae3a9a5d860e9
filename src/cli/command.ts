import type { CommandName, Config, Flags } from '../config.js';

/** A flag of one command only (not an option of the config table), e.g. `--demo`. */
export interface CommandFlag {
  flag: string;
  help: string;
  required?: boolean;
}

/** What a command runs with. */
export interface CommandContext<C = Config> {
  config: C;
  /** commander's options (camelCase keys), for the command's own flags. */
  flags: Flags;
  /** Positional arguments (`import <file>`). */
  args: string[];
  /** Ends the process at once with `code` (a second Ctrl-C); only the entry point exits. */
  forceExit: (code: number) => never;
}

/** A command's work, in the command's own file (e.g. src/cli/sync.ts). */
export interface CommandImplementation<C = Config> {
  /** Does the work; resolves with the exit code (src/cli/exit.ts); throws what reportError maps. */
  run(ctx: CommandContext<C>): Promise<number>;
}

/**
 * One `livefeed` command as `--help` shows it, listed once in src/cli/commands.ts; its work is in
 * its own file in src/cli/, loaded by {@link CliCommand.implementation} only when it runs, so that
 * e.g. `sync` does not load the GraphQL server. Its config options come from the rows of
 * src/config/options.ts that name it; `flags` are its own.
 */
export interface CliCommand<C = Config> {
  name: CommandName;
  /** commander's command text: name and positional arguments (`import <file>`). */
  usage: string;
  description: string;
  flags?: readonly CommandFlag[];
  /** Loads the command's configuration; default loadConfig (the one Config). */
  load?: (flags: Flags) => C;
  /**
   * Exit as soon as `run` returns: idle keep-alive sockets, a server-sent events stream or a page
   * still compressing would otherwise hold the process for seconds after SIGTERM. Commands that
   * print to stdout set the exit code instead, so a pipe gets all of it.
   */
  exitAtOnce?: boolean;
  /** Imports the command's own file (a dynamic import) and gives its work. */
  implementation(): Promise<CommandImplementation<C>>;
}
