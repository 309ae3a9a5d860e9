import { existsSync } from 'node:fs';
import { connect } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { describePostgres, type PostgresCluster, startPostgres } from '../../support/postgres.js';

/** True when something accepts TCP connections on 127.0.0.1:`port`. */
function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describePostgres('the throw-away PostgreSQL cluster of the tests', () => {
  let cluster: PostgresCluster | undefined;
  beforeAll(async () => {
    cluster = await startPostgres();
  });
  afterAll(() => cluster?.stop());

  it('runs PostgreSQL 15 or later on a loopback port and makes databases', async () => {
    const version = Number(await cluster!.psql('postgres', 'SHOW server_version_num'));
    expect(version).toBeGreaterThanOrEqual(150000);
    expect(await accepts(cluster!.port)).toBe(true);
    const { url, withoutPassword } = await cluster!.createDatabase('cluster_probe');
    expect(new URL(url).pathname).toBe('/cluster_probe');
    expect(new URL(withoutPassword).password).toBe('');
    expect(
      await cluster!.psql('cluster_probe', "SELECT current_database() || ' ' || getdatabaseencoding()"),
    ).toBe('cluster_probe UTF8\n');
  });

  it('stops the server and deletes its folder', async () => {
    const { dir, port } = cluster!;
    await cluster!.stop();
    expect(existsSync(dir)).toBe(false);
    expect(await accepts(port)).toBe(false);
    await cluster!.stop();
  });
});
