import type { SampleFeedConfig } from '../config.js';
import { BUNDLED_FEED_ROOT, SAMPLE_TOKEN, startSampleFeed } from '../samplefeed/server.js';
import type { CommandImplementation } from './command.js';
import { EXIT } from './exit.js';

/** `livefeed sample-feed`: serves the bundled sample feed (or a folder like it) until SIGINT/SIGTERM. */
export const sampleFeedCommand: CommandImplementation<SampleFeedConfig> = {
  async run({ config }) {
    const feed = await startSampleFeed({
      root: config.sampleFeedRoot ?? BUNDLED_FEED_ROOT,
      host: config.sampleFeedHost,
      port: config.sampleFeedPort,
    });
    process.stdout.write(
      `sample feed at ${feed.feedRoot} (token ${SAMPLE_TOKEN}); full dumps at ${feed.dumpsUrl}\n`,
    );
    await new Promise<void>((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    });
    await feed.close();
    return EXIT.ok;
  },
};
