import { mkdir, symlink } from 'node:fs/promises';
import { join } from 'node:path';
import { ENTITY_TYPES, type EntityType } from '../../src/feed/entities.js';
import { BUNDLED_FEED_ROOT } from '../../src/samplefeed/server.js';
import { type FixtureManifest, readBundledManifest } from './manifest.js';

/**
 * A feed folder that grows: the bundled feed's files (signatures included) linked in packet by
 * packet, as upstream publishes them, for a sample feed server over `root` (it reads the folder on
 * every request).
 */
export class GrowingFeed {
  readonly manifest: FixtureManifest = readBundledManifest();
  private published: number;

  constructor(readonly root: string) {
    this.published = this.manifest.firstPacket - 1;
  }

  /** Links every file of the packets after those already published, up to `last`. */
  async publishUpTo(last: number): Promise<void> {
    for (let packet = this.published + 1; packet <= last; packet++) {
      const entry = this.manifest.packets.find((p) => p.number === packet);
      if (!entry) throw new Error(`the bundled feed has no packet ${packet}`);
      const files: string[] = [];
      if (entry.replication) files.push(entry.replication.file, entry.replication.signature);
      for (const dump of Object.values(entry.jsonDumps)) files.push(dump.file, dump.signature);
      for (const file of files) {
        await mkdir(join(this.root, file, '..'), { recursive: true });
        await symlink(join(BUNDLED_FEED_ROOT, file), join(this.root, file));
      }
    }
    this.published = Math.max(this.published, last);
  }

  /**
   * The stream's expected events of packets `from`..`to` in stream order, from the manifest:
   * per packet its JSON dump lines by entity type then position, then its removals by MBID;
   * only of `entities` when given.
   */
  expectedEvents(from: number, to: number, entities: readonly EntityType[] = ENTITY_TYPES): string[] {
    const events: string[] = [];
    for (const packet of this.manifest.packets) {
      if (packet.number < from || packet.number > to) continue;
      for (const entity of ENTITY_TYPES.filter((e) => entities.includes(e))) {
        for (const mbid of packet.jsonDumps[entity]?.mbids ?? [])
          events.push(`${packet.number} change ${mbid}`);
      }
      const removals = [...(packet.replication?.removals ?? [])].sort((a, b) =>
        a.mbid === b.mbid ? a.kind.localeCompare(b.kind) : a.mbid.localeCompare(b.mbid),
      );
      for (const r of removals.filter((x) => entities.includes(x.entity)))
        events.push(`${packet.number} ${r.kind} ${r.mbid}`);
    }
    return events;
  }
}
