import { z } from 'zod';
import * as parse from './parsers.js';
import { type OptionRow, row } from './row.js';

/** The `sample-feed` command's rows of the option table (src/config/options.ts), in `--help` order. */
export const SAMPLE_FEED_OPTIONS = {
  sampleFeedPort: row({
    flag: '--port <port>',
    env: 'LIVEFEED_SAMPLE_FEED_PORT',
    fallback: 8080,
    help: 'port',
    commands: ['sample-feed'],
    schema: parse.intText.min(0).max(65535),
  }),
  sampleFeedHost: row({
    flag: '--host <host>',
    fallback: '127.0.0.1',
    help: 'address',
    commands: ['sample-feed'],
    schema: z.string().min(1),
  }),
  sampleFeedRoot: row({
    flag: '--root <dir>',
    shown: 'the bundled feed',
    help: 'folder laid out like the feed root',
    commands: ['sample-feed'],
    schema: z.string().min(1).optional(),
  }),
} satisfies Record<string, OptionRow>;
