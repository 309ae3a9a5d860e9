import { fileURLToPath } from 'node:url';

/**
 * What the CLI needs to know about the bundled sample feed without loading its server (a command
 * that does not serve it, such as `sync` against upstream, should not load src/http/).
 */

/**
 * Token the bundled sample feed accepts by default. It has upstream's token shape (40 characters of
 * `[A-Za-z0-9]`, FEED.md, Errors) so clients validate it like a real one; it grants nothing upstream.
 */
export const SAMPLE_TOKEN = 'LivefeedSampleFeedTokenNotASecret0000000';

/**
 * Folder of the bundled demo feed, `fixtures/feed` (production naming, built by `npm run fixtures`).
 * Resolved from this module, so it is the same from `src/samplefeed/` and `dist/samplefeed/`.
 */
export const BUNDLED_FEED_ROOT: string = fileURLToPath(new URL('../../fixtures/feed', import.meta.url));
