import { CLAIM_PATTERNS, checkReplyClaims } from '../../src/guardian';
import { handlers } from '../../handlers';
import { CLAIM_CASES } from './scenarios';

describe('checkReplyClaims (issue 29): a claim of done work needs a call of that effect kind that ran', () => {
  it.each(CLAIM_CASES)('%s (ran: %j)', (text, ran, claims) => {
    const r = checkReplyClaims(text, new Set(ran));
    expect(r.claims.map((c) => c.text)).toEqual(claims);
    expect([r.action, r.reasonCode]).toEqual(
      claims.length > 0 ? ['MODIFY', 'G_REPLY_UNSUPPORTED_CLAIM'] : ['ALLOW', 'G_REPLY_OK'],
    );
  });

  it('is data-driven: a kind is supported only through its own row of the table', () => {
    const table = { ...CLAIM_PATTERNS, send_message: [/お届けしました/g] };
    expect(checkReplyClaims('資料をお届けしました', new Set(), { table }).claims).toHaveLength(1);
    expect(checkReplyClaims('資料をお届けしました', new Set(['send_message']), { table }).claims).toHaveLength(0);
    expect(checkReplyClaims('資料をお届けしました', new Set()).claims).toHaveLength(0);
  });

  it('every tool with effects declares an effect kind that has claim phrases', () => {
    for (const tool of handlers) {
      if (tool.effects.length === 0) continue;
      expect({ tool: tool.name, kind: tool.effectKind }).toEqual({ tool: tool.name, kind: expect.any(String) });
      expect(CLAIM_PATTERNS[tool.effectKind!].length).toBeGreaterThan(0);
    }
  });

  it("the persona's fixed texts for what was not done claim nothing", async () => {
    const { loadPrompts } = await import('../../src/brain/prompts');
    for (const persona of ['soul', 'polite'] as const) {
      const p = loadPrompts(persona);
      for (const lang of ['ja', 'en'] as const)
        for (const [key, text] of Object.entries(p.messages[lang]))
          if (key.startsWith('reply.not_done'))
            expect([key, checkReplyClaims(text, new Set()).claims]).toEqual([key, []]);
    }
  });
});
