/**
 * The Discord adapter (R-A3). The only place in Hisho that imports discord.js.
 */
export { DISCORD_MESSAGE_LIMIT, MIN_SPLIT_LIMIT, splitDiscordMessage } from './split-message';
export {
  isAddressedToBot,
  repliesToBot,
  stripDiscordMentions,
  toInbound,
  type AddressingOptions,
  type DiscordMentionsLike,
  type DiscordMessageLike,
  type DiscordRoomContext,
  type DiscordUserLike,
  type ToInboundOptions,
} from './to-inbound';
export {
  BUTTON_KEY_PATTERN,
  DiscordSender,
  buildButtonRows,
  formatOptionsText,
  type DiscordChannelPort,
  type DiscordSendPayload,
} from './discord-sender';
export {
  BUTTON_ERROR_NOTE,
  DEFAULT_BUTTON_NOTES,
  DiscordGateway,
  DiscordGatewayClosed,
  UNUSABLE_BUTTON_NOTE,
  classifyDiscordFailure,
  gatewayIntents,
  type ButtonClick,
  type ButtonInteractionLike,
  type ButtonOutcome,
  type DiscordGatewayOptions,
  type GatewayMessage,
} from './discord-gateway';
export { summarizeError, type ErrorSummary } from './error-summary';
