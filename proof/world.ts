import { startFakeChatwork } from '../bench/fake-chatwork-server';
import { startFakeAnthropicServer, type FakeAnthropicServer } from '../tests/fakes/anthropic-server';
import { ProofPostgres } from './harness';
import { ProofModel } from './model';

/** Everything outside the service that the proof provides: its own PostgreSQL, ChatWork and the model. */
export interface ProofWorld {
  pg: ProofPostgres;
  cw: Awaited<ReturnType<typeof startFakeChatwork>>;
  llm: FakeAnthropicServer;
  model: ProofModel;
  close(): Promise<void>;
}

export async function openProofWorld(): Promise<ProofWorld> {
  const pg = await ProofPostgres.start();
  const cw = await startFakeChatwork();
  const model = new ProofModel();
  const llm = await startFakeAnthropicServer(model.respond, { delayMs: () => model.delayMs, record: false });
  return {
    pg, cw, llm, model,
    close: async () => {
      await llm.close();
      await cw.close();
      await pg.close();
    },
  };
}
