/**
 * The inbound half of the Discord adapter (R-A3, R-A5): a discord.js client that turns messages
 * addressed to the bot into {@link InboundMessage}s for intake, and confirmation-button clicks into
 * `onButton` calls acknowledged within Discord's 3-second window (PLATFORMS.md B4).
 *
 * Button acknowledgement design: for a well-formed key the very first thing done with the interaction
 * is `deferUpdate()` — before `onButton` or any other I/O — so the 3-second rule holds however slow
 * `onButton` is. The outcome is then delivered within the 15-minute token window: an ephemeral
 * `followUp` note for not_yours/decided/expired/invalid/errors, and the buttons removed (`editReply`) once a
 * click is accepted or found decided. A malformed key is answered at once with an ephemeral `reply`.
 * If the acknowledgement itself fails (the interaction already timed out), the click is dropped: the
 * user saw "interaction failed" and can click again or answer by text.
 *
 * Commands (issue 44): `/hisho` and the message command 「Hishoに頼む」 are acknowledged first with a deferred reply
 * (`deferReply`, ephemeral unless `public` is true), then stored as a request like a mention; the turn's answers
 * come back as the interaction's follow-ups (DiscordSender), so a private request's answers and questions stay
 * private. Commands are registered per allow-listed guild when the connection is ready (commands.ts).
 *
 * 「変更する」 (a button with a form key): the core says at once whether the person may change the confirmation; the
 * first response is then the form (a modal, type 9) or a private note. A submitted form is acknowledged with a
 * deferred update, then handed to the core as a change request (the same turn as a typed change).
 *
 * Logs carry ids only, never message content or interaction tokens.
 */
import {
  Client,
  DiscordAPIError,
  DiscordjsErrorCodes,
  Events,
  HTTPError,
  GatewayIntentBits,
  MessageFlags,
  ModalBuilder,
  Partials,
  TextInputBuilder,
  TextInputStyle,
  ActionRowBuilder,
  type ModalSubmitInteraction,
  RESTEvents,
  Routes,
  type ButtonInteraction,
  type ChatInputCommandInteraction,
  type MessageContextMenuCommandInteraction,
  type GatewayIntentBits as IntentBits,
  type Interaction,
  type Message,
  type MessageCreateOptions,
  type MessageMentionOptions,
  type RESTOptions,
} from 'discord.js';
import { outboundFetch } from '../../core/outbound-http';
import { receive, type Received } from '../receive';
import type { Logger } from '../../observability/logger';
import type { InboundMessage, ReplyInteraction } from '../../core/chat';
import {
  ASK_HISHO_COMMAND,
  HISHO_COMMAND,
  PUBLIC_OPTION,
  REQUEST_OPTION,
  registerCommands,
  type SharedLock,
} from './commands';
import type { AdapterFailure } from '../supervisor';
import { BUTTON_KEY_PATTERN, DiscordSender, FORM_KEY_PATTERN, type DiscordSendPayload } from './discord-sender';
import { summarizeError } from './error-summary';
import { isAddressedToBot, toInbound, type DiscordMessageLike, type DiscordRoomContext } from './to-inbound';

/** Result of handing a button click to the core. */
export interface ButtonOutcome {
  /** `decided`: the confirmation was already decided (the note says how: done, cancelled…). */
  status: 'accepted' | 'decided' | 'not_yours' | 'expired' | 'invalid';
  /** Note shown (ephemerally) to the clicker; defaults per status. */
  note?: string;
}

/** A confirmation-button click, as the core sees it. */
export interface ButtonClick {
  roomId: string;
  accountId: string;
  key: string;
  interactionId: string;
  /** Set when the question clicked is private (ephemeral): the outcome is told through this click, privately. */
  replyVia?: ReplyInteraction;
}

/** A form the core offers for a confirmation (Discord modal: ≤ 5 text inputs). */
export interface FormSpec {
  title: string;
  fields: {
    id: string;
    label: string;
    value: string;
    required: boolean;
    maxLength: number;
    long: boolean;
    placeholder?: string;
  }[];
}

/** The core's answer to 「変更する」: the form, or a private note saying why not. */
export type FormOpeningOutcome =
  { status: 'form'; form: FormSpec } | { status: 'decided' | 'not_yours' | 'expired' | 'invalid'; note?: string };

/** The core's answer to a submitted form. */
export interface FormSubmitOutcome {
  status: 'accepted' | 'decided' | 'not_yours' | 'expired' | 'invalid' | 'unchanged';
  note?: string;
}

/** Dependencies and settings of {@link DiscordGateway}. */
export interface DiscordGatewayOptions {
  /** Bot token (used only by {@link DiscordGateway.start}). */
  token: string;
  /** Discord's REST base without the version (`DISCORD_API_BASE_URL`); default discord.js's https://discord.com/api. */
  apiBaseUrl?: string;
  intake: { accept(msg: InboundMessage): Promise<{ status: 'accepted' | 'duplicate' }> };
  /** The room directory's entry for a channel, or null when the channel is not listed. */
  resolveRoom: (channelId: string, guildId: string | null) => Promise<DiscordRoomContext | null>;
  /** Organisation for DMs (authority member; a sender not in the directory is a stranger there). */
  defaultOrgId: () => string | undefined;
  /**
   * The organisation that allow-lists this guild in its directory, or null. Unlisted channels of an
   * allow-listed guild are public rooms; messages from any other guild are ignored (issue 8).
   */
  resolveGuild?: (guildId: string) => Promise<string | null>;
  onButton: (click: ButtonClick) => Promise<ButtonOutcome>;
  /** 「変更する」 clicked: the form to show, or why not (answered within Discord's 3 seconds). */
  onFormOpen?: (click: ButtonClick & { senderName?: string }) => Promise<FormOpeningOutcome>;
  /** A form submitted: its values by field id. */
  onFormSubmit?: (
    submit: ButtonClick & { senderName?: string; values: Record<string, string> },
  ) => Promise<FormSubmitOutcome>;
  /**
   * Registers `/hisho` and 「Hishoに頼む」 when the connection is ready, in these guilds (the directory's allow-list),
   * under a lock all instances share. Absent: no commands are registered.
   */
  commands?: { guildIds: () => Promise<string[]>; lock: SharedLock };
  logger: Logger;
  /** Injectable for tests; by default a client with the intents below is created. */
  client?: Client;
  /**
   * Told when the connection changes after {@link DiscordGateway.start} succeeded: `down` while discord.js
   * reconnects on its own, `up` when it is back, `lost` when the gateway closed for good (e.g. the token was
   * revoked: close 4004) — the owner then calls `start()` again (see AdapterSupervisor).
   */
  status?: {
    up(): void;
    down(reason: string, reasonJa: string): void;
    lost(err: DiscordGatewayClosed): void;
  };
  /**
   * Take messages and button clicks in (default true); false: a process that only posts (HISHO_ROLE turns or
   * background), whose connection ignores what arrives — the intake process stores it.
   */
  receive?: boolean;
  /** Also request the privileged MessageContent intent (not needed for mention/DM-only use). Default false. */
  messageContentIntent?: boolean;
}

/** The message fields the gateway reads (a discord.js `Message` fits). */
export type GatewayMessage = DiscordMessageLike & {
  /** Used to fall back from a thread to its parent channel when resolving the room. */
  channel?: { isThread(): boolean; parentId?: string | null } | null;
};

/** What locates a message or an interaction: its channel (a thread's parent) and guild. */
type RoomOf = Pick<GatewayMessage, 'channelId' | 'guildId' | 'channel'>;

/** The button-interaction surface the gateway uses (a discord.js `ButtonInteraction` fits). */
export interface ButtonInteractionLike {
  id: string;
  customId: string;
  channelId: string | null;
  user: { id: string };
  /** For a click on a private (ephemeral) question: its answer is told through this interaction. */
  applicationId?: string;
  token?: string;
  message?: { flags: { has(flag: MessageFlags): boolean } };
  deferUpdate(): Promise<unknown>;
  reply(options: { content: string; flags: MessageFlags.Ephemeral }): Promise<unknown>;
  followUp(options: { content: string; flags: MessageFlags.Ephemeral }): Promise<unknown>;
  editReply(options: { components: [] }): Promise<unknown>;
}

/** Shown for custom ids that are not ours (forged, from an old version, or tampered with). */
export const UNUSABLE_BUTTON_NOTE = 'このボタンは使えません';

/** Default ephemeral notes per non-accepted outcome. */
export const DEFAULT_BUTTON_NOTES: Record<Exclude<ButtonOutcome['status'], 'accepted'>, string> = {
  not_yours: 'この確認は依頼した方だけが操作できます。',
  decided: 'この確認はもう答えが出ています。',
  expired: 'この確認は期限切れです。もう一度お願いしてください。',
  invalid: 'この操作は受け付けられませんでした。',
};

/** Shown when the core failed while handling a click. */
export const BUTTON_ERROR_NOTE = '処理できませんでした。少し待ってからもう一度お試しください。';

/** Shown (privately) for a command Hisho does not have (an old registration). */
export const UNKNOWN_COMMAND_NOTE = 'このコマンドはもう使えません。/hisho をお使いください。';

/** Shown (privately) when a command is used where Hisho does not answer. */
export const COMMAND_ELSEWHERE_NOTE =
  'このチャンネルではHishoを使えません。Hishoが参加している許可済みのサーバーでお試しください。';

/** Shown (privately) when 「Hishoに頼む」 is used on a message without text. */
export const COMMAND_NO_TEXT_NOTE = 'このメッセージには文字がないため頼めません。/hisho で依頼の内容を書いてください。';

/** The gateway closed the connection with a code discord.js does not reconnect from (4004, 4013, 4014…). */
export class DiscordGatewayClosed extends Error {
  override readonly name = 'DiscordGatewayClosed';
  constructor(readonly code: number) {
    super(`the Discord gateway closed the connection (${code})`);
  }
}

/** Gateway close codes that mean the token or the app's configuration was refused. */
const REFUSED: Record<number, { reason: string; reasonJa: string }> = {
  4004: {
    reason: 'the bot token was rejected (gateway close 4004); check DISCORD_BOT_TOKEN',
    reasonJa: 'Botのトークンが拒否されました。DISCORD_BOT_TOKEN を確認してください',
  },
  4013: { reason: 'invalid gateway intents (close 4013)', reasonJa: 'インテントの指定が不正です' },
  4014: {
    reason: 'the gateway refused an intent not enabled for the app (close 4014); enable it in the Developer Portal',
    reasonJa: 'Developer Portal で有効になっていないインテントを要求しました',
  },
};

/**
 * One failed connection attempt, for the supervisor: a refused token (401 on REST, close 4004) is `rejected`
 * (retried only slowly); outages (5xx, timeouts, no READY) are retried with backoff. No secrets, no bodies.
 */
export function classifyDiscordFailure(err: unknown): AdapterFailure {
  const tokenRejected = {
    reason: 'the bot token was rejected (401); check DISCORD_BOT_TOKEN',
    reasonJa: 'Botのトークンが拒否されました。DISCORD_BOT_TOKEN を確認してください',
    rejected: true,
  };
  if ((err as { code?: unknown } | null)?.code === DiscordjsErrorCodes.TokenInvalid) return tokenRejected;
  if (err instanceof DiscordAPIError || err instanceof HTTPError) {
    if (err.status === 401) return tokenRejected;
    return {
      reason: `Discord REST answered ${err.status}`,
      reasonJa: `Discordが応答しません（HTTP ${err.status}）`,
      rejected: false,
    };
  }
  if (err instanceof DiscordGatewayClosed) {
    const refused = REFUSED[err.code];
    if (refused) return { ...refused, rejected: true };
    return { reason: err.message, reasonJa: `Discordのゲートウェイが接続を閉じました（${err.code}）`, rejected: false };
  }
  const s = summarizeError(err);
  const detail = [s.name, s.code, s.status].filter((x) => x !== undefined).join(' ');
  return { reason: `connection failed (${detail})`, reasonJa: 'Discordに接続できません', rejected: false };
}

/** Intents for a mention/DM bot: no privileged intent unless asked. */
export function gatewayIntents(messageContent = false): IntentBits[] {
  const intents = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages];
  return messageContent ? [...intents, GatewayIntentBits.MessageContent] : intents;
}

/**
 * Connects Hisho to Discord. Listeners are attached in the constructor (so an injected client can be
 * driven by emitting events); {@link start} logs in, {@link stop} disconnects.
 */
export class DiscordGateway {
  private client: Client;
  /** The client is ours (not injected): a failed attempt's client is replaced by a fresh one. */
  private readonly owned: boolean;
  private attempts = 0;
  /** `start()` succeeded and the connection was not lost for good since. */
  private connected = false;
  private readonly log: Logger;
  private readonly onMessageCreate = (message: Message): void => {
    if (this.opts.receive === false) return;
    void this.handleMessage(message);
  };
  private readonly onInteractionCreate = (interaction: Interaction): void => {
    if (this.opts.receive === false) return;
    if (interaction.isButton() && FORM_KEY_PATTERN.test(interaction.customId)) void this.openForm(interaction);
    else if (interaction.isButton()) void this.handleButton(interaction);
    else if (interaction.isModalSubmit()) void this.handleFormSubmit(interaction);
    else if (interaction.isChatInputCommand() || interaction.isMessageContextMenuCommand())
      void this.handleCommand(interaction);
  };
  private readonly onReady = (client: Client<true>): void => {
    this.log.info({ botUserId: client.user.id }, 'discord gateway ready');
    if (this.opts.receive !== false && this.opts.commands) void this.registerCommands(client.application.id);
  };
  private readonly onError = (err: Error): void => {
    this.log.error({ error: summarizeError(err) }, 'discord client error');
  };
  private readonly onWarn = (warning: string): void => {
    this.log.warn({ warning: warning.slice(0, 200) }, 'discord client warning');
  };
  private readonly onShardDisconnect = (event: { code: number }): void => {
    if (!this.connected) return; // during start(): the attempt itself fails (see start)
    this.connected = false;
    this.opts.status?.lost(new DiscordGatewayClosed(event.code));
  };
  private readonly onShardReconnecting = (): void => {
    if (this.connected) this.opts.status?.down('gateway reconnecting', 'Discordに再接続しています');
  };
  private readonly onShardBack = (): void => {
    if (this.connected) this.opts.status?.up();
  };
  private readonly onRateLimited = (info: { route: string; retryAfter: number; global: boolean }): void => {
    this.log.warn(
      { route: info.route, retryAfterMs: info.retryAfter, global: info.global },
      'discord rate limited (queued)',
    );
  };

  /** @param opts - See {@link DiscordGatewayOptions}. */
  constructor(private readonly opts: DiscordGatewayOptions) {
    this.log = opts.logger.child({ component: 'discord' });
    this.owned = !opts.client;
    this.client = opts.client ?? this.newClient();
    this.attach(this.client);
  }

  private newClient(): Client {
    return new Client({
      intents: gatewayIntents(this.opts.messageContentIntent === true),
      partials: [Partials.Channel],
      // discord.js REST queues and retries on rate limits; retries covers 5xx and timeouts. Its requests go out
      // like every other of the process (keep-alive agents, HTTPS_PROXY: core/outbound-http.ts).
      rest: {
        retries: 3,
        makeRequest: outboundFetch as unknown as RESTOptions['makeRequest'],
        ...(this.opts.apiBaseUrl ? { api: this.opts.apiBaseUrl } : {}),
      },
      // Defence in depth: the sender sets this per message too.
      allowedMentions: { parse: [], repliedUser: true },
      failIfNotExists: false,
    });
  }

  private attach(client: Client): void {
    client.on(Events.MessageCreate, this.onMessageCreate);
    client.on(Events.InteractionCreate, this.onInteractionCreate);
    client.on(Events.ClientReady, this.onReady);
    // Without an 'error' listener an emitted error would crash the process.
    client.on(Events.Error, this.onError);
    client.on(Events.Warn, this.onWarn);
    client.on(Events.ShardDisconnect, this.onShardDisconnect);
    client.on(Events.ShardReconnecting, this.onShardReconnecting);
    client.on(Events.ShardResume, this.onShardBack);
    client.on(Events.ShardReady, this.onShardBack);
    client.rest.on(RESTEvents.RateLimited, this.onRateLimited);
  }

  private detach(client: Client): void {
    client.off(Events.MessageCreate, this.onMessageCreate);
    client.off(Events.InteractionCreate, this.onInteractionCreate);
    client.off(Events.ClientReady, this.onReady);
    client.off(Events.Error, this.onError);
    client.off(Events.Warn, this.onWarn);
    client.off(Events.ShardDisconnect, this.onShardDisconnect);
    client.off(Events.ShardReconnecting, this.onShardReconnecting);
    client.off(Events.ShardResume, this.onShardBack);
    client.off(Events.ShardReady, this.onShardBack);
    client.rest.off(RESTEvents.RateLimited, this.onRateLimited);
  }

  /**
   * One connection attempt: logs in and resolves once the gateway is READY; rejects when REST fails (5xx,
   * timeouts, 401) or the gateway closes for good (4004…) — otherwise discord.js would wait for ever. A gateway
   * that never sends READY keeps the attempt pending while discord.js reconnects on its own (every 15 s):
   * destroying a client in the middle of that makes discord.js reconnect a destroyed client. Called again after a
   * failure (AdapterSupervisor); a client of ours is then replaced by a fresh one, since discord.js does not
   * reconnect a client it destroyed.
   */
  async start(): Promise<void> {
    if (this.attempts++ > 0 && this.owned) {
      this.detach(this.client);
      void this.client.destroy().catch(() => undefined);
      this.client = this.newClient();
      this.attach(this.client);
    }
    const client = this.client;
    let onClosed: ((event: { code: number }) => void) | undefined;
    const closed = new Promise<never>((_resolve, reject) => {
      onClosed = (event) => reject(new DiscordGatewayClosed(event.code));
      client.on(Events.ShardDisconnect, onClosed);
    });
    const login = client.login(this.opts.token);
    // The login may still settle after the attempt was given up: nothing must be left unhandled.
    login.catch(() => undefined);
    try {
      await Promise.race([login, closed]);
      this.connected = true;
    } catch (err) {
      void client.destroy().catch(() => undefined);
      throw err;
    } finally {
      if (onClosed) client.off(Events.ShardDisconnect, onClosed);
    }
  }

  /** Detaches listeners and disconnects. */
  async stop(): Promise<void> {
    this.connected = false;
    this.detach(this.client);
    await this.client.destroy();
  }

  /** A {@link DiscordSender} posting through this client (channels.fetch → send, replying by reference). */
  sender(): DiscordSender {
    return new DiscordSender(
      {
        sendToChannel: (channelId, payload) => this.sendToChannel(channelId, payload),
        editMessage: (channelId, messageId, content) => this.editMessage(channelId, messageId, content),
        followUp: (interaction, payload) => this.followUp(interaction, payload),
      },
      this.log,
    );
  }

  /**
   * Handles one `messageCreate`: ignores what is not addressed to the bot, resolves the room, and hands
   * the translated message to intake. Never throws (errors are logged).
   *
   * @param message - A discord.js `Message` or an object of the same shape.
   */
  async handleMessage(message: GatewayMessage): Promise<void> {
    const ids = { messageId: message.id, roomId: message.channelId };
    try {
      const botUserId = this.client.user?.id;
      if (!botUserId) {
        this.log.debug(ids, 'discord message before ready: ignored');
        return;
      }
      // Parsed by discord.js: the shared intake steps (ignore own, addressed to the bot, organisation, store).
      const outcome = await receive(this.received(message, botUserId), this.opts.intake);
      if (outcome.status !== 'ignored') {
        const fields = { ...ids, senderAccountId: outcome.message.senderAccountId, status: outcome.status };
        this.log.info(fields, 'discord message taken in');
      } else if (outcome.reason === 'no_text') {
        // Without the Message Content intent a reply that does not ping the bot arrives without its text.
        this.log.info(ids, 'discord reply to the bot without text (Message Content intent off?): ignored');
      } else if (outcome.reason === 'no_organisation') {
        const why = 'discord message from a guild not allow-listed (or no organisation): ignored';
        this.log.warn({ ...ids, guildId: message.guildId }, why);
      }
    } catch (err) {
      this.log.error({ ...ids, error: summarizeError(err) }, 'discord message handling failed');
    }
  }

  /** A message as the shared intake steps read it (`src/adapters/receive.ts`): Discord's addressing and rooms. */
  private received(message: GatewayMessage, botUserId: string): Received {
    let room: DiscordRoomContext | null = null;
    return {
      platform: 'discord',
      senderAccountId: message.author.id,
      botAccountId: botUserId,
      notAddressed: () => {
        if (!isAddressedToBot(message, { botUserId })) return 'not_addressed_to_bot';
        return message.content.trim() === '' && message.guildId !== null ? 'no_text' : null;
      },
      organisation: async () => {
        room = await this.roomFor(message);
        // The room's authority (directory, allow-listed guild, DM) travels in `room`, which toInbound reads.
        return room ? { orgId: room.orgId, roomListed: true } : null;
      },
      toInbound: () => (room ? toInbound(message, { botUserId, room }) : null),
    };
  }

  /**
   * Handles one button click (see the module comment for the 3-second design). Never throws.
   *
   * @param interaction - A discord.js `ButtonInteraction` or an object of the same shape.
   */
  async handleButton(interaction: ButtonInteractionLike): Promise<void> {
    const ids = { interactionId: interaction.id, accountId: interaction.user.id, roomId: interaction.channelId };
    const key = interaction.customId;
    if (!BUTTON_KEY_PATTERN.test(key) || !interaction.channelId) {
      this.log.warn(ids, 'forged or stale button id');
      await this.ack(() => interaction.reply({ content: UNUSABLE_BUTTON_NOTE, flags: MessageFlags.Ephemeral }), ids);
      return;
    }
    if (!(await this.ack(() => interaction.deferUpdate(), ids))) return;

    const click: ButtonClick = {
      roomId: interaction.channelId,
      accountId: interaction.user.id,
      key,
      interactionId: interaction.id,
    };
    if (interaction.message?.flags.has(MessageFlags.Ephemeral) && interaction.applicationId && interaction.token)
      click.replyVia = { applicationId: interaction.applicationId, token: interaction.token, private: true };
    let outcome: ButtonOutcome;
    try {
      outcome = await this.opts.onButton(click);
    } catch (err) {
      this.log.error({ ...ids, error: summarizeError(err) }, 'discord button handling failed');
      await this.bestEffort(
        () => interaction.followUp({ content: BUTTON_ERROR_NOTE, flags: MessageFlags.Ephemeral }),
        ids,
        'followUp',
      );
      return;
    }
    this.log.info({ ...ids, status: outcome.status }, 'discord button click');
    if (outcome.status === 'accepted' || outcome.status === 'expired' || outcome.status === 'decided') {
      // The choice is made (or can no longer be): remove the buttons from the confirmation message.
      await this.bestEffort(() => interaction.editReply({ components: [] }), ids, 'editReply');
    }
    if (outcome.status !== 'accepted') {
      const note = outcome.note?.trim() || DEFAULT_BUTTON_NOTES[outcome.status];
      await this.bestEffort(
        () => interaction.followUp({ content: note, flags: MessageFlags.Ephemeral }),
        ids,
        'followUp',
      );
    }
  }

  /**
   * Handles `/hisho` and 「Hishoに頼む」 (see the module comment): deferred first, then stored as a request from the
   * person who used the command, its answers sent as the interaction's follow-ups. Never throws.
   */
  async handleCommand(interaction: ChatInputCommandInteraction | MessageContextMenuCommandInteraction): Promise<void> {
    const ids = { interactionId: interaction.id, accountId: interaction.user.id, roomId: interaction.channelId };
    let text: string;
    let isPublic = false;
    if (interaction.isChatInputCommand() && interaction.commandName === HISHO_COMMAND) {
      text = interaction.options.getString(REQUEST_OPTION, true).trim();
      isPublic = interaction.options.getBoolean(PUBLIC_OPTION) ?? false;
    } else if (interaction.isMessageContextMenuCommand() && interaction.commandName === ASK_HISHO_COMMAND) {
      const target = interaction.targetMessage;
      const author = target.member?.displayName || target.author.globalName || target.author.username;
      text = target.content.trim()
        ? `（${author}さんの次のメッセージについての依頼です）\n${target.content.trim()}`
        : '';
    } else {
      this.log.warn({ ...ids, command: interaction.commandName }, 'unknown discord command');
      await this.ack(() => interaction.reply({ content: UNKNOWN_COMMAND_NOTE, flags: MessageFlags.Ephemeral }), ids);
      return;
    }
    const flags = isPublic ? undefined : MessageFlags.Ephemeral;
    if (!(await this.ack(() => interaction.deferReply(flags ? { flags } : {}), ids))) return;
    const tell = (content: string) =>
      this.bestEffort(() => interaction.followUp({ content, flags: MessageFlags.Ephemeral }), ids, 'followUp');
    if (!text) return tell(COMMAND_NO_TEXT_NOTE);
    try {
      const room = await this.roomFor(interaction);
      if (!room) {
        this.log.warn({ ...ids, guildId: interaction.guildId }, 'discord command outside an allow-listed guild');
        return tell(COMMAND_ELSEWHERE_NOTE);
      }
      const member = interaction.member as { displayName?: string } | null;
      const senderName = member?.displayName || interaction.user.globalName || interaction.user.username;
      const message: InboundMessage = {
        platform: 'discord',
        orgId: room.orgId,
        roomId: interaction.channelId,
        senderAccountId: interaction.user.id,
        senderName,
        text,
        rawText: text,
        mentions: [],
        platformMessageId: interaction.id,
        sentAt: new Date(interaction.createdTimestamp).toISOString(),
        isDirect: interaction.guildId === null,
        roomAuthority: room.authority,
        interaction: { applicationId: interaction.applicationId, token: interaction.token, private: !isPublic },
      };
      const outcome = await receive(
        {
          platform: 'discord',
          senderAccountId: interaction.user.id,
          botAccountId: this.client.user?.id,
          notAddressed: () => null,
          organisation: async () => ({ orgId: room.orgId, roomListed: true }),
          toInbound: () => message,
        },
        this.opts.intake,
      );
      const kind = interaction.isChatInputCommand() ? 'slash' : 'message';
      this.log.info({ ...ids, command: kind, public: isPublic, status: outcome.status }, 'discord command taken in');
    } catch (err) {
      this.log.error({ ...ids, error: summarizeError(err) }, 'discord command handling failed');
      await tell(BUTTON_ERROR_NOTE);
    }
  }

  /**
   * 「変更する」: asks the core whether this person may change the confirmation, then shows the form (the first and
   * only response: a modal), or answers privately why not. Never throws.
   */
  async openForm(interaction: ButtonInteraction): Promise<void> {
    const ids = { interactionId: interaction.id, accountId: interaction.user.id, roomId: interaction.channelId };
    const note = (content: string) =>
      this.ack(() => interaction.reply({ content, flags: MessageFlags.Ephemeral }), ids);
    if (!this.opts.onFormOpen) return void (await note(UNUSABLE_BUTTON_NOTE));
    let outcome: FormOpeningOutcome;
    try {
      outcome = await this.opts.onFormOpen({
        roomId: interaction.channelId,
        accountId: interaction.user.id,
        key: interaction.customId,
        interactionId: interaction.id,
      });
    } catch (err) {
      this.log.error({ ...ids, error: summarizeError(err) }, 'discord form opening failed');
      return void (await note(BUTTON_ERROR_NOTE));
    }
    this.log.info({ ...ids, status: outcome.status }, 'discord form button');
    if (outcome.status !== 'form') {
      const text = outcome.note?.trim() || DEFAULT_BUTTON_NOTES[outcome.status];
      return void (await note(text));
    }
    const modal = new ModalBuilder().setCustomId(interaction.customId).setTitle(outcome.form.title.slice(0, 45));
    for (const f of outcome.form.fields.slice(0, 5)) {
      const input = new TextInputBuilder()
        .setCustomId(f.id)
        .setLabel(f.label.slice(0, 45) || f.id)
        .setStyle(f.long ? TextInputStyle.Paragraph : TextInputStyle.Short)
        .setRequired(f.required)
        .setMaxLength(Math.max(1, Math.min(f.maxLength, 4000)));
      if (f.value) input.setValue(f.value.slice(0, Math.min(f.maxLength, 4000)));
      if (f.placeholder) input.setPlaceholder(f.placeholder.slice(0, 100));
      modal.addComponents(new ActionRowBuilder<TextInputBuilder>().addComponents(input));
    }
    await this.ack(() => interaction.showModal(modal), ids);
  }

  /**
   * A submitted form: acknowledged first (a deferred update: the question stays as it is), then handed to the core
   * as a change request; why it was not taken is told privately. On a private question the turn's answers come
   * back through this interaction, privately. Never throws.
   */
  async handleFormSubmit(interaction: ModalSubmitInteraction): Promise<void> {
    const ids = { interactionId: interaction.id, accountId: interaction.user.id, roomId: interaction.channelId };
    if (!FORM_KEY_PATTERN.test(interaction.customId) || !interaction.channelId || !this.opts.onFormSubmit) {
      this.log.warn(ids, 'forged or stale form id');
      await this.ack(() => interaction.reply({ content: UNUSABLE_BUTTON_NOTE, flags: MessageFlags.Ephemeral }), ids);
      return;
    }
    const fromMessage = interaction.isFromMessage();
    const acked = fromMessage
      ? await this.ack(() => interaction.deferUpdate(), ids)
      : await this.ack(() => interaction.deferReply({ flags: MessageFlags.Ephemeral }), ids);
    if (!acked) return;
    const values: Record<string, string> = {};
    for (const [id, field] of interaction.fields.fields) if ('value' in field) values[id] = String(field.value);
    const submit: ButtonClick & { values: Record<string, string> } = {
      roomId: interaction.channelId,
      accountId: interaction.user.id,
      key: interaction.customId,
      interactionId: interaction.id,
      values,
    };
    if (interaction.message?.flags.has(MessageFlags.Ephemeral))
      submit.replyVia = { applicationId: interaction.applicationId, token: interaction.token, private: true };
    const tell = (content: string) =>
      this.bestEffort(() => interaction.followUp({ content, flags: MessageFlags.Ephemeral }), ids, 'followUp');
    let outcome: FormSubmitOutcome;
    try {
      outcome = await this.opts.onFormSubmit(submit);
    } catch (err) {
      this.log.error({ ...ids, error: summarizeError(err) }, 'discord form handling failed');
      return tell(BUTTON_ERROR_NOTE);
    }
    this.log.info({ ...ids, status: outcome.status }, 'discord form submitted');
    if (outcome.status === 'accepted' || outcome.status === 'decided' || outcome.status === 'expired') {
      // This question can no longer be answered (a new one follows a change): its buttons go.
      if (fromMessage) await this.bestEffort(() => interaction.editReply({ components: [] }), ids, 'editReply');
    }
    if (outcome.status !== 'accepted') {
      const fallback =
        outcome.status === 'unchanged' ? DEFAULT_BUTTON_NOTES.invalid : DEFAULT_BUTTON_NOTES[outcome.status];
      await tell(outcome.note?.trim() || fallback);
    }
  }

  /** Registers the commands in the allow-listed guilds (commands.ts); failures are logged, never thrown. */
  private async registerCommands(applicationId: string): Promise<void> {
    const commands = this.opts.commands!;
    try {
      await registerCommands({
        rest: this.client.rest,
        applicationId,
        guildIds: await commands.guildIds(),
        lock: commands.lock,
        logger: this.log,
      });
    } catch (err) {
      this.log.warn({ error: summarizeError(err) }, 'discord command registration failed');
    }
  }

  /** The first response to an interaction; false when Discord refused it (usually: too late). */
  private async ack(respond: () => Promise<unknown>, ids: Record<string, unknown>): Promise<boolean> {
    try {
      await respond();
      return true;
    } catch (err) {
      this.log.warn({ ...ids, error: summarizeError(err) }, 'discord interaction acknowledgement failed');
      return false;
    }
  }

  private async bestEffort(call: () => Promise<unknown>, ids: Record<string, unknown>, what: string): Promise<void> {
    try {
      await call();
    } catch (err) {
      this.log.warn({ ...ids, error: summarizeError(err), call: what }, 'discord interaction follow-up failed');
    }
  }

  /**
   * The room context for a message: the directory entry for its channel (or a thread's parent); else a
   * DM belongs to the default organisation (authority member), and an unlisted channel of a guild the
   * directory allow-lists is a public room of that organisation (R-A5). Anything else: null (ignored).
   *
   * @param message - The message whose room to resolve.
   * @returns The room, or null when neither the directory nor an allow-listed guild applies.
   */
  async roomFor(message: RoomOf): Promise<DiscordRoomContext | null> {
    const direct = await this.opts.resolveRoom(message.channelId, message.guildId);
    if (direct) return direct;
    const parentId = message.channel?.isThread() ? message.channel.parentId : null;
    if (parentId) {
      const parent = await this.opts.resolveRoom(parentId, message.guildId);
      if (parent) return parent;
    }
    if (message.guildId !== null) {
      const orgId = (await this.opts.resolveGuild?.(message.guildId)) ?? null;
      return orgId ? { orgId, authority: 'public' } : null;
    }
    const orgId = this.opts.defaultOrgId();
    return orgId ? { orgId, authority: 'member' } : null;
  }

  /** Rewrites a message of ours and removes its components (REST: PATCH /channels/{c}/messages/{m}). */
  private async editMessage(channelId: string, messageId: string, content: (current: string) => string) {
    const channel = await this.client.channels.fetch(channelId);
    if (!channel || !channel.isTextBased()) throw new Error(`discord channel ${channelId} is not text-based`);
    const message = await channel.messages.fetch(messageId);
    await message.edit({ content: content(message.content), components: [] });
  }

  /** A follow-up of an interaction (REST: POST /webhooks/{app}/{token}?wait=true; no bot token needed). */
  private async followUp(
    interaction: { applicationId: string; token: string },
    payload: { content: string; components?: unknown[]; flags: number },
  ): Promise<{ id: string }> {
    const body = {
      content: payload.content,
      flags: payload.flags,
      allowed_mentions: { parse: [] },
      ...(payload.components ? { components: payload.components } : {}),
    };
    const sent = (await this.client.rest.post(Routes.webhook(interaction.applicationId, interaction.token), {
      body,
      auth: false,
      query: new URLSearchParams({ wait: 'true' }),
    })) as { id: string };
    return { id: sent.id };
  }

  private async sendToChannel(channelId: string, payload: DiscordSendPayload): Promise<{ id: string }> {
    const channel = await this.client.channels.fetch(channelId);
    if (!channel || !channel.isSendable()) throw new Error(`discord channel ${channelId} is not sendable`);
    const options: MessageCreateOptions = {
      content: payload.content,
      allowedMentions: payload.allowedMentions as MessageMentionOptions,
    };
    if (payload.components) options.components = payload.components as MessageCreateOptions['components'];
    if (payload.replyToMessageId)
      options.reply = { messageReference: payload.replyToMessageId, failIfNotExists: false };
    if (payload.nonce) {
      options.nonce = payload.nonce;
      options.enforceNonce = true;
    }
    const sent = await channel.send(options);
    return { id: sent.id };
  }
}
