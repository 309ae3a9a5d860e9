/**
 * One replication packet store, in its own process: `tsx bench/packetChild.ts <archive> <db> <packet>`.
 * Prints `{ ms, rows, cpuMs, maxRssMb }`; `ms` is storeReplicationPacket alone (COMMIT included).
 */
import { rmSync } from 'node:fs';
import { openStore } from '../src/db/client.js';
import { storeReplicationPacket } from '../src/sync/replication.js';

const [archive, db, packet] = process.argv.slice(2);
if (!archive || !db || !packet) throw new Error('usage: packetChild.ts ARCHIVE DB PACKET');
for (const suffix of ['', '-wal', '-shm']) rmSync(db + suffix, { force: true });
const store = openStore(db);
const cpu0 = process.cpuUsage();
const started = performance.now();
const stored = await storeReplicationPacket(store, Number(packet), archive);
const ms = performance.now() - started;
const cpu = process.cpuUsage(cpu0);
store.close();
process.stdout.write(
  `${JSON.stringify({
    ms: Math.round(ms),
    rows: stored.rowCount,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
  })}\n`,
);
