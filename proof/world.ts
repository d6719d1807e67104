import { startFakeChatwork } from '../bench/fake-chatwork-server';
import { scratchServer } from '../scripts/lib/scratch-db';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../tests/fakes/anthropic-server';
import { ProofPostgres } from './harness';
import { ProofModel } from './model';

/** Where the proof creates its databases; only its own embedded server can be stopped and started. */
export interface ProofDatabases {
  createDatabase(name: string): Promise<string>;
  /** Stop/start the server process — absent on a shared server, which must never be stopped. */
  stop?(): Promise<void>;
  /** A crash instead of a stop: SIGKILL to the server and every backend (what is not yet on disk is lost). */
  kill?(): Promise<void>;
  start?(): Promise<void>;
  close(): Promise<void>;
}

/** Everything outside the service that the proof provides: PostgreSQL, ChatWork and the model. */
export interface ProofWorld {
  pg: ProofDatabases;
  cw: Awaited<ReturnType<typeof startFakeChatwork>>;
  llm: FakeAnthropicServer;
  model: ProofModel;
  close(): Promise<void>;
}

/**
 * With `databaseUrl`, databases are created on that (shared) server and dropped at the end — enough for
 * everything but the database restart; without it the proof runs its own embedded PostgreSQL.
 */
export async function openProofWorld(o: { databaseUrl?: string } = {}): Promise<ProofWorld> {
  let pg: ProofDatabases;
  if (o.databaseUrl) {
    const server = await scratchServer({ databaseUrl: o.databaseUrl, prefix: 'hisho-proof' });
    pg = { createDatabase: (name) => server.create(name), close: () => server.close() };
  } else {
    pg = await ProofPostgres.start();
  }
  const cw = await startFakeChatwork();
  const model = new ProofModel();
  const llm = await startFakeAnthropicServer(model.respond, { delayMs: () => model.delayMs, record: false });
  return {
    pg,
    cw,
    llm,
    model,
    close: async () => {
      await llm.close();
      await cw.close();
      await pg.close();
    },
  };
}
