import { MAX_PACKET } from '../db/keys.js';
import { isMbid } from '../feed/mbid.js';
import { userError } from './errors.js';

/**
 * Returns `packet` when it is a possible packet number.
 * @param argument the argument that gave it, named in the message and `extensions.argument`
 * @throws GraphQLError INVALID_PACKET
 */
export function checkPacketNumber(packet: number, argument = 'packet'): number {
  if (!Number.isInteger(packet) || packet < 1 || packet > MAX_PACKET) {
    throw userError(
      'INVALID_PACKET',
      `"${argument}" must be a replication sequence from 1 to ${MAX_PACKET}, got ${packet}`,
      { argument },
    );
  }
  return packet;
}

/**
 * Returns the MBID in lower case when `mbid` is a UUID.
 * @throws GraphQLError INVALID_MBID
 */
export function checkMbid(mbid: string): string {
  if (!isMbid(mbid))
    throw userError(
      'INVALID_MBID',
      `not an MBID (a UUID like 8a754a16-0027-3a29-b6d7-2b40ea0481ed): ${JSON.stringify(mbid)}`,
    );
  return mbid.toLowerCase();
}
