/** ChatWork adapter (R-A2): webhook intake, API client, and the reply sender. */
export { chatworkSignature, verifyChatworkSignature } from './verify-signature';
export {
  stripChatworkMarkup,
  chatworkAnswerText,
  parseMentions,
  parseReplyTo,
  neutralizeForChatwork,
  type ChatworkReplyTarget,
} from './markup';
export {
  chatworkWebhookEnvelopeSchema,
  chatworkMessageEventSchema,
  chatworkMentionEventSchema,
  parseChatworkWebhook,
  type ChatworkWebhook,
  type ChatworkWebhookParseResult,
  type ChatworkMessageEvent,
  type ChatworkMentionEvent,
} from './webhook.schema';
export {
  ChatworkClient,
  chatworkClientFrom,
  type ChatworkClientConfig,
  type ChatworkClientOptions,
  type ChatworkMember,
  type ChatworkRole,
} from './chatwork-client';
export {
  ChatworkSender,
  formatChatworkBody,
  CHATWORK_MAX_BODY_LENGTH,
  type ChatworkSenderOptions,
} from './chatwork-sender';
export {
  chatworkWebhookRouter,
  createChatworkWebhookHandler,
  CHATWORK_WEBHOOK_PATH,
  type ChatworkWebhookDeps,
} from './webhook.route';
