import { positionOfEvent } from '../db/changeFeedQueries.js';
import { feedEventJson } from '../db/feedEventJson.js';
import { epochPositionText, parseEpochPosition } from '../db/feedPosition.js';
import { readFollowing } from '../db/feedRewound.js';
import { currentEpoch, rewriteEpochAt } from '../db/feedRewrites.js';
import { HistoryPrunedError } from '../db/feedWindow.js';
import type { WebhookStore } from '../db/webhookStore.js';
import type { EntityType } from '../feed/entities.js';

/** What a webhook delivery asks of the change stream. */
export interface WebhookEventQuery {
  /** Stream position (text) after the last event delivered; null: from the start of the history held. */
  after: string | null;
  /** Most events (1 to 500). */
  first: number;
  /** Entity types (upstream spelling); null: all. */
  entities: readonly EntityType[] | null;
  /** Lower-case MBIDs; null: all. */
  mbids: readonly string[] | null;
}

/** One event for a webhook body. */
export interface WebhookEvent {
  /**
   * The stream position just after the event, as text: unique and stable, the receiver's
   * idempotency key. Once an operator stored packets at or before the event's again
   * (db/feedRewrites.ts) it ends in `@<epoch>` of the last such store, so that an event sent again
   * after it is not taken for one the receiver has; a store of later packets leaves it as it was.
   */
  id: string;
  packet: number;
  /** The event as JSON, with the GraphQL field names (`__typename`, `mbid`, `entity`, ...). */
  json: string;
}

/** One read of the stream for a webhook. */
export interface WebhookEventPage {
  events: WebhookEvent[];
  /**
   * Position (text, with the page's epoch) where the next read starts, also when more events
   * follow (then just after the last event); null when the stream served nothing yet.
   */
  next: string | null;
  /** True when more events follow now. */
  hasMore: boolean;
  /**
   * Set when older packets were stored again behind the stored position (db/feedRewrites.ts): the
   * page starts again at `packet`, whose events and the ones after it are sent again, from
   * `position` (text, with its epoch), which the webhook stores in place of the position it had.
   */
  rewound?: { packet: number; position: string };
}

/**
 * Reads the change stream for webhooks: given the stored position, filters and a batch size, the
 * events and the next position. A function type so that delivery does not depend on how the stream
 * is stored. @throws WebhookSourceError when the position cannot be read from.
 */
export type WebhookEventSource = (
  store: Pick<WebhookStore, 'readFeedEvents'>,
  query: WebhookEventQuery,
) => Promise<WebhookEventPage>;

/** The stored position cannot be read from (history pruned, or not a position): delivery stops there. */
export class WebhookSourceError extends Error {
  override name = 'WebhookSourceError';
}

/**
 * The change stream of this database (`WebhookStore.readFeedEvents`, either store), up to its
 * frontier: nothing is served that a later sync could still insert before it. When an operator
 * stored older packets again behind the stored position, the page starts again at the lowest of
 * them (`rewound`): events are sent again rather than lost.
 * @throws WebhookSourceError when the history after the stored position was pruned, or the stored
 *   position is not one
 */
export const changeStreamSource: WebhookEventSource = async (store, query) => {
  const stored = query.after === null ? undefined : parseEpochPosition(query.after);
  if (query.after !== null && stored === undefined)
    throw new WebhookSourceError(
      `stored position ${JSON.stringify(query.after)} is not a change stream position`,
    );
  try {
    const { page, rewoundTo, restart } = await readFollowing((q) => store.readFeedEvents(q), {
      after: stored?.position,
      epoch: stored?.epoch,
      first: query.first,
      entities: query.entities ?? undefined,
      mbids: query.mbids ?? undefined,
    });
    return {
      events: page.events.map((event) => ({
        id: epochPositionText({
          position: positionOfEvent(event),
          epoch: rewriteEpochAt(page.rewrites, event.packet),
        }),
        packet: event.packet,
        json: feedEventJson(event),
      })),
      next: page.next ? epochPositionText({ position: page.next, epoch: currentEpoch(page.rewrites) }) : null,
      hasMore: page.hasMore,
      ...(restart && { rewound: { packet: rewoundTo!, position: epochPositionText(restart) } }),
    };
  } catch (error) {
    if (!(error instanceof HistoryPrunedError)) throw error;
    throw new WebhookSourceError(
      `events after its position were pruned (--keep-history; history now starts at packet ${error.historyFrom}) ` +
        'and cannot be sent; see the README, Webhooks',
    );
  }
};
