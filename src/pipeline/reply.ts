import type { PromptSet } from '../brain/prompts';
import type { Language } from '../core/language';
import { personaMessage } from '../core/messages';
import { checkReplyText, type GuardianConfig } from '../guardian';
import type { TurnDecision } from './turn-decision';

/**
 * Reply composition (R-C4): every text a person reads passes the Guardian's reply check here, once. A
 * blocked reply becomes the persona's 「お答えできない」 message and the decision `blocked` (with the
 * check's verdict); otherwise the checked text (mention markup neutralised) and checked option labels.
 */
export class ReplyComposer {
  constructor(private readonly d: { prompts: PromptSet; guardianConfig: GuardianConfig }) {}

  compose(decision: TurnDecision, lang: Language): TurnDecision {
    const config = this.d.guardianConfig;
    const check = checkReplyText(decision.reply.text, config);
    if (check.action === 'BLOCK') {
      return {
        ...decision,
        kind: 'blocked',
        reasonCode: check.reasonCode,
        decider: 'SYSTEM',
        guardian: { action: 'BLOCK', reasonCode: check.reasonCode },
        reply: { text: personaMessage(this.d.prompts, 'reply.blocked_confidential', lang) },
        notes: { ...decision.notes, blockedReply: true },
      };
    }
    const options = decision.reply.options?.map((o) => {
      const label = checkReplyText(o.label, config);
      return { ...o, label: label.action === 'BLOCK' ? '—' : label.text };
    });
    return {
      ...decision,
      reply: { ...decision.reply, text: check.text, options },
      notes: { ...decision.notes, replyCheck: check.reasonCode },
    };
  }
}
