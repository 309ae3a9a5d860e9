import { thenAwaitable } from '../../../db/reads.js';
import type { Context } from '../../builder.js';
import { type EntityShape, entityOfCurrent } from '../entity.js';

/**
 * Links between entities (`Release.releaseGroup`, `ArtistCredit.artist`, `Artist.area`, ...) name
 * an MBID in the line; they resolve to the linked `Entity` of the current state when it is held.
 * One loader per request collects the MBIDs every link of one execution step asks for and reads
 * them in ONE statement (`Reads.currentOfMbids`, either store), so a page of 500 releases with
 * their release groups costs one read, not 500. Each MBID is read once per request.
 */
class EntityLoader {
  private readonly loaded = new Map<string, Promise<EntityShape | null>>();
  private batch = new Map<
    string,
    { resolve: (e: EntityShape | null) => void; reject: (e: unknown) => void }
  >();
  private scheduled = false;

  constructor(private readonly ctx: Context) {}

  load(mbid: string): Promise<EntityShape | null> {
    let entity = this.loaded.get(mbid);
    if (!entity) {
      entity = new Promise((resolve, reject) => this.batch.set(mbid, { resolve, reject }));
      this.loaded.set(mbid, entity);
      if (!this.scheduled) {
        this.scheduled = true;
        // After the current step: every resolver of a list's items runs before it, so they share the read.
        setImmediate(() => this.dispatch());
      }
    }
    return entity;
  }

  private dispatch(): void {
    const batch = this.batch;
    this.batch = new Map();
    this.scheduled = false;
    const fail = (error: unknown) => {
      for (const waiting of batch.values()) waiting.reject(error);
    };
    try {
      const mbids = [...batch.keys()];
      const answered = thenAwaitable(this.ctx.reads.currentOfMbids(mbids), (rows) => {
        mbids.forEach((mbid, i) => {
          const row = rows[i];
          batch.get(mbid)!.resolve(row ? entityOfCurrent(row) : null);
        });
      });
      if (answered instanceof Promise) answered.catch(fail);
    } catch (error) {
      fail(error);
    }
  }
}

const loaders = new WeakMap<Context, EntityLoader>();

/**
 * The `Entity` of `mbid` (any case) from the current state, batched with the other links of the
 * same request (see {@link EntityLoader}); null when `mbid` is null or not held.
 * @throws what the database read throws (the link fields then fail with it).
 */
export function linkedEntity(ctx: Context, mbid: string | null): Promise<EntityShape | null> | null {
  if (!mbid) return null;
  let loader = loaders.get(ctx);
  if (!loader) {
    loader = new EntityLoader(ctx);
    loaders.set(ctx, loader);
  }
  return loader.load(mbid.toLowerCase());
}
