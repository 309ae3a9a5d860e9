import SchemaBuilder from '@pothos/core';
import type { Reads } from '../db/reads.js';
import type { EntityType } from '../feed/entities.js';
import type { PacketEvents } from '../ops/events.js';

/** Facts about this instance that the API shows (the demo is labelled as such). */
export interface ServiceInfo {
  demo: boolean;
  deployment: 'production' | 'test';
  /** Feed root without any token. */
  feedRoot: string;
  /** Path segment of the feed root (`musicbrainz`), used by the mirror paths. */
  database: string;
  version: string;
  /** Entity types this instance syncs (the rest show as SKIPPED). */
  entities: readonly EntityType[];
}

/** Per-request GraphQL context. */
export interface Context {
  /**
   * The reads of either store (db/reads.ts): resolvers read through it, so the schema answers over
   * SQLite and PostgreSQL alike (issue 17, docs/POSTGRES_PORT.md steps 4 and 6); no resolver reads
   * a store directly.
   */
  reads: Reads;
  service: ServiceInfo;
  /** Origin of the request (`http://host:port`), for absolute links on this server. */
  origin: string;
  /** The process's live events (subscription `packetSynced`). */
  events: PacketEvents;
  /**
   * How long a subscription waits, in ms, for `reads` to show a packet `events` announced
   * (ops/packetArrival.ts): a read replica replays it after the primary announced it; 0 when the
   * reads are the database the sync writes.
   */
  arrivalWaitMs: number;
}

/** The Pothos builder; types are added by the files beside this one. */
export const builder = new SchemaBuilder<{
  Context: Context;
  Scalars: {
    JSON: { Input: unknown; Output: unknown };
    DateTime: { Input: string; Output: string };
    /** Integers beyond 32 bits (replication seqids and xids), exact up to 2^53 − 1. */
    SafeInt: { Input: number; Output: number };
  };
  DefaultFieldNullability: false;
}>({ defaultFieldNullability: false });

/** The builder's schema types, for generic helpers. */
export type Types = typeof builder extends PothosSchemaTypes.SchemaBuilder<infer T> ? T : never;
