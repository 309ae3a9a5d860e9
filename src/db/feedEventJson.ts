import { entityEnumName } from '../feed/entities.js';
import { type FeedEvent, isRemovalEvent } from './changeFeedQueries.js';

/**
 * The plain JSON form of a change stream event, with the field names of the GraphQL types
 * (`__typename`, then the fields of `EntityChange` or `EntityRemoval`), for consumers outside
 * GraphQL (webhooks POST batches of these). `type` is the GraphQL enum name (`RELEASE_GROUP`);
 * times are ISO 8601 UTC; a change's `data` is the JSON dump line exactly as stored (not parsed and
 * written again).
 *
 * EntityChange: `{"__typename":"EntityChange","mbid","type","packet","position","timestamp","name","data"}`
 * EntityRemoval: `{"__typename":"EntityRemoval","mbid","type","packet","kind","mergedInto","timestamp"}`
 */
export function feedEventJson(event: FeedEvent): string {
  if (isRemovalEvent(event)) {
    return JSON.stringify({
      __typename: 'EntityRemoval',
      mbid: event.mbid,
      type: entityEnumName(event.entity),
      packet: event.packet,
      kind: event.kind,
      mergedInto: event.mergedInto,
      timestamp: event.timestamp,
    });
  }
  const line = event.data.toString('utf8');
  const head = JSON.stringify({
    __typename: 'EntityChange',
    mbid: event.mbid,
    type: entityEnumName(event.entity),
    packet: event.packet,
    position: event.position,
    timestamp: event.timestamp,
    name: nameOfLine(line),
  });
  // The stored line is valid JSON (ingest checks it), so it is spliced in as it is.
  return `${head.slice(0, -1)},"data":${line}}`;
}

/** A batch of events as one JSON array, in the order given. */
export function feedEventsJson(events: readonly FeedEvent[]): string {
  return `[${events.map(feedEventJson).join(',')}]`;
}

/** The line's `name`, else its `title` (recordings, releases, works), else null: `EntityChange.name`. */
export function nameOfLine(line: string | Record<string, unknown>): string | null {
  const data = typeof line === 'string' ? (JSON.parse(line) as Record<string, unknown>) : line;
  const name = data.name ?? data.title;
  return typeof name === 'string' ? name : null;
}
