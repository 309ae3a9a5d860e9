import { loadSampleFeedConfig, type SampleFeedConfig } from '../config.js';
import { SAMPLE_TOKEN } from '../samplefeed/bundled.js';
import type { CliCommand, CommandFlag } from './command.js';

/**
 * Every `livefeed` command as `--help` lists it, in that order. A command's work is in its own file
 * and imported only when that command runs: `sync` and `import` then load no GraphQL or HTTP server
 * code (0.6 s of imports, issue 16). Adding a command: one file and one entry here.
 */

const SYNC_FLAGS: readonly CommandFlag[] = [
  { flag: '--demo', help: 'sync the bundled sample feed (what start does without a token)' },
];

// biome-ignore lint/suspicious/noExplicitAny: each command has its own config type
export const COMMANDS: CliCommand<any>[] = [
  {
    name: 'sync',
    usage: 'sync',
    description: 'catch up from the feed into the database; follow unless --once',
    flags: SYNC_FLAGS,
    exitAtOnce: true,
    implementation: async () => (await import('./sync.js')).syncCommand,
  },
  {
    name: 'serve',
    usage: 'serve',
    description: 'serve GraphQL (GraphiQL for browsers) on /graphql from a database a sync wrote',
    flags: [
      {
        flag: '--demo',
        help: 'serve the demo database (<data-dir>/demo.db, what start syncs without a token)',
      },
    ],
    exitAtOnce: true,
    implementation: async () => (await import('./serve.js')).serveCommand,
  },
  {
    name: 'start',
    usage: 'start',
    description: 'sync (following) and serve in one process; a demo without a token',
    flags: SYNC_FLAGS,
    exitAtOnce: true,
    implementation: async () => (await import('./start.js')).startCommand,
  },
  {
    name: 'status',
    usage: 'status',
    description: 'print the local and upstream position, unfinished files and freshness on one screen',
    flags: [
      { flag: '--offline', help: 'do not ask upstream; show the position the sync last recorded' },
      { flag: '--demo', help: 'look at the demo database (what start uses without a token)' },
    ],
    implementation: async () => (await import('./status.js')).statusCommand,
  },
  {
    name: 'import',
    usage: 'import <file>',
    description: 'load a local JSON dump (hourly or full, <entity>.tar.xz) through the sync pipeline',
    flags: [
      {
        flag: '--packet <n>',
        help: "the dump's packet (its REPLICATION_SEQUENCE must equal it)",
        required: true,
      },
      { flag: '--entity <type>', help: 'entity type (default: from the member mbdump/<entity>)' },
    ],
    implementation: async () => (await import('./import.js')).importCommand,
  },
  {
    name: 'bootstrap',
    usage: 'bootstrap',
    description:
      'first import: the full JSON dumps, verified, then `start` continues at the following packet',
    flags: [
      { flag: '--dump <name>', help: 'dump directory (YYYYMMDD-NNN; default: the one LATEST names)' },
      { flag: '--demo', help: 'bootstrap the demo database from the bundled sample feed' },
    ],
    implementation: async () => (await import('./bootstrap.js')).bootstrapCommand,
  },
  {
    name: 'sample-feed',
    usage: 'sample-feed',
    description: `serve the bundled sample feed (token ${SAMPLE_TOKEN})`,
    load: (flags): SampleFeedConfig => loadSampleFeedConfig(flags),
    implementation: async () => (await import('./sampleFeed.js')).sampleFeedCommand,
  },
];
