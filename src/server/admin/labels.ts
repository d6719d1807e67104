/**
 * What operator screens say instead of codes: one table of reason codes (label, one-line explanation, next
 * step), and the labels of turn kinds, decisions, confirmation states, LLM call purposes and Guardian
 * rules. Used by /admin (sent to the page once), the turn inspector and the audit CSV export.
 */
import { RULE_LABELS } from '../../guardian';
import type { ApologyReason } from '../../notices/apology';
import type { DecisionKind, ReasonCode } from '../../turn/turn-decision';

/** Codes a turn record can carry besides a turn's {@link ReasonCode}: notices and background work. */
export type NoticeCode =
  'P_REMINDER' | 'P_DEADLINE_REMINDER' | 'P_DAILY_DIGEST' | 'P_GOAL_CHECKIN' | 'P_TASK_DUE_CHANGED';
export type WorkCode =
  | 'W_DONE'
  | 'W_ERROR'
  | 'W_ABANDONED'
  | 'W_REQUESTER_LEFT'
  | 'W_CONFIRMATION_DECLINED'
  | 'W_STEP_FAILED'
  | 'W_CANCELLED';
export type RecordedCode = ReasonCode | ApologyReason | NoticeCode | WorkCode;

export interface CodeInfo {
  /** A few words (the table cell). */
  label: string;
  /** One sentence: what happened. */
  explain: string;
  /** One sentence: what the operator can do (「対応は不要です。」 when nothing). */
  next: string;
}

const NONE = '対応は不要です。';
const c = (label: string, explain: string, next = NONE): CodeInfo => ({ label, explain, next });

/** Every recorded reason code (kept complete by the type and by tests/server/admin-labels.test.ts). */
export const REASON_INFO: Readonly<Record<RecordedCode, CodeInfo>> = {
  // Guardian: proposals
  G_UNKNOWN_TOOL: c(
    '未対応の操作',
    'ボットが存在しない機能を使おうとしたため止めました。',
    '同じ依頼が続くなら機能の追加を検討してください。',
  ),
  G_TOOL_DISABLED: c(
    '停止中の機能',
    '設定で停止している機能が提案されたため止めました。',
    '必要なら設定で機能を有効にしてください。',
  ),
  G_CONSTITUTION_NO_REASONING: c(
    '判断の根拠なし',
    'ボットが判断の根拠を書かなかったため止めました。',
    '続くようならモデルの不調としてアラートを確認してください。',
  ),
  G_CONSTITUTION_SHORT_REASONING: c(
    '判断の根拠が短い',
    'ボットの判断の根拠が短すぎたため止めました。',
    '続くようならモデルの不調としてアラートを確認してください。',
  ),
  G_CONSTITUTION_PERMISSION_CLAIM: c(
    '権限の自己判断',
    'ボットが「権限がある」と自分で判断したため止めました（権限はルールが決めます）。',
    '依頼内容を確認し、必要なら本人に別の言い方を案内してください。',
  ),
  G_NG_PATTERN: c(
    '秘密情報を検出',
    'パスワードやマイナンバーなど秘密にすべき値が含まれていたため止めました。',
    '本人に秘密情報をチャットに書かないよう伝えてください。',
  ),
  G_CONFIDENTIAL: c(
    '機密語を検出',
    '給与・人事評価などの機密にかかわる語が含まれていたため止めました。',
    '必要なら担当者が直接対応してください。',
  ),
  G_PERSONAL_IDENTIFIER: c('個人識別情報', '記憶に個人識別情報や健康情報を残そうとしたため止めました。', NONE),
  G_DANGEROUS_CRITICAL: c(
    '自動実行しない操作',
    '危険度が最も高い操作のため、自動では実行しません。',
    '必要なら担当者が手作業で行ってください。',
  ),
  G_DANGEROUS_HIGH: c('危険度の高い操作', '危険度の高い操作のため、2回の確認を求めました。', NONE),
  G_DANGEROUS_MEDIUM: c('確認が必要な操作', '影響のある操作のため、実行前に確認を求めました。', NONE),
  G_TOOL_REQUIRES_CONFIRMATION: c('常に確認する操作', 'この機能は常に実行前の確認が必要です。', NONE),
  G_POLICY_BLOCK: c(
    '社内ルールで禁止',
    '社内ルールで禁止された操作のため止めました。',
    'ルールの内容が適切か確認してください。',
  ),
  G_POLICY_CONFIRM: c('社内ルールに関係', '社内ルールにかかわる操作のため、ルールを示して確認を求めました。', NONE),
  G_CONFIDENCE_VERY_LOW: c(
    '理解できなかった',
    'ボットの確信度がとても低く、依頼を理解できなかったため止めました。',
    '本人に具体的な言い方で頼み直すよう案内してください。',
  ),
  G_CONFIDENCE_LOW: c('確信度が低い', 'ボットの確信度が低いため、内容を質問しました。', NONE),
  G_CONFIDENCE_MEDIUM: c('確信度が中程度', 'ボットの確信度が中程度のため、実行前に確認を求めました。', NONE),
  G_AMOUNT_HIGH: c('高額（10万円超）', '10万円を超える金額のため確認を求めました。', NONE),
  G_AMOUNT_VERY_HIGH: c('高額（100万円超）', '100万円を超える金額のため、2回の確認を求めました。', NONE),
  G_RECIPIENTS_MANY: c('宛先が3人以上', '3人以上に送るため確認を求めました。', NONE),
  G_RECIPIENTS_MASS: c('宛先が10人以上', '10人以上に送るため、内容を示して2回の確認を求めました。', NONE),
  G_RECIPIENTS_ALL: c('全員宛て', '全員に送るため、2回の確認を求めました。', NONE),
  G_DELETE: c('削除', '削除する操作のため確認を求めました。', NONE),
  G_DELETE_BULK: c('まとめて削除', '複数をまとめて削除するため、件数を示して確認を求めました。', NONE),
  G_PARAM_FIXED: c('値を整えた', '空白や日付の書き方を整えてから進めました。', NONE),
  G_PARAM_UNFIXABLE: c('解釈できない値', '日付などの値を解釈できなかったため確認を求めました。', NONE),
  G_DATE_PAST: c('過去の日付', '今日より前の日付だったため確認を求めました。', NONE),
  G_DATE_FAR_FUTURE: c('1年以上先の日付', '1年以上先の日付だったため確認を求めました。', NONE),
  G_STRICT_MODE_CONFIRM: c('厳格モードの確認', '厳格モードのため、影響のある操作はすべて確認しています。', NONE),
  G_OK: c('問題なし', 'すべてのルールを通過しました。'),
  G_REPLY_OK: c('返答に問題なし', '返答の文面はチェックを通過しました。'),
  G_REPLY_MARKUP_NEUTRALISED: c(
    'メンションを無効化',
    '返答に全員宛てなどのメンションがあったため無効にしてから送りました。',
  ),
  G_REPLY_UNSUPPORTED_CLAIM: c(
    '返答を書き直し',
    'ボットが実行していないことを「しました」と書いたため、送る前に書き直させました。',
    '続くようならプロンプトの見直しを検討してください。',
  ),
  G_POLICIES_UNAVAILABLE: c(
    '社内ルールを読めない',
    '社内ルールを読み込めなかったため、安全のため止めました。',
    'データベースの状態を確認してください。',
  ),
  // AuthorizationGate
  Z_OK: c('権限あり', '依頼した人にはこの操作の権限があります。'),
  Z_UNKNOWN_TOOL: c('権限表にない機能', '権限の設定がない機能のため断りました。', '機能の権限設定を確認してください。'),
  Z_LEVEL_TOO_LOW: c(
    '権限レベル不足',
    '依頼した人の権限レベルではできない操作のため断りました。',
    '必要なら上長から依頼してもらうか、ディレクトリの権限レベルを見直してください。',
  ),
  Z_PUBLIC_NO_EFFECTS: c(
    '公開ルームでは不可',
    '公開ルームでは影響のある操作をしません。',
    '本人に非公開のルームで頼むよう案内してください。',
  ),
  Z_PUBLIC_ROOM: c(
    '公開ルーム',
    '公開ルームのため、この操作は行いませんでした。',
    '本人に非公開のルームで頼むよう案内してください。',
  ),
  Z_STRANGER: c(
    '組織外の人',
    'ディレクトリにいない人からの依頼のため断りました。',
    '社員ならディレクトリにアカウントを登録してください。',
  ),
  Z_OUT_OF_SCOPE_USER: c(
    '対象の人が範囲外',
    '依頼した人が扱えない相手についての操作のため断りました。',
    '必要なら相手の上長から依頼してもらってください。',
  ),
  Z_OUT_OF_SCOPE_DEPARTMENT: c(
    '対象の部署が範囲外',
    '依頼した人が扱えない部署についての操作のため断りました。',
    '必要なら部署の責任者から依頼してもらってください。',
  ),
  Z_UNKNOWN_TARGET: c(
    '対象が不明',
    '操作の相手がディレクトリで見つからなかったため断りました。',
    '名前の表記やディレクトリの登録を確認してください。',
  ),
  Z_UNKNOWN_LEVEL: c(
    '権限レベル未設定',
    '依頼した人の権限レベルが設定されていないため断りました。',
    'ディレクトリで権限レベルを設定してください。',
  ),
  Z_TOP_SECRET: c('極秘情報', '極秘扱いの情報のため断りました。', NONE),
  Z_LOOKUP_ERROR: c(
    '権限を確認できない',
    'ディレクトリを読めず権限を確認できなかったため、安全のため断りました。',
    'データベースとディレクトリの状態を確認してください。',
  ),
  Z_CONFIRM_PERSON: c('本人への確認', '他の人にかかわる操作のため、実行前に確認を求めました。', NONE),
  Z_CONFIRM_ORG_WIDE: c('全社への確認', '組織全体にかかわる操作のため、実行前に確認を求めました。', NONE),
  // Errors
  LLM_UNAVAILABLE: c(
    'AIに接続できない',
    'AIサービスに接続できず、返答できませんでした。',
    'AIサービスの障害情報とアラートを確認してください。',
  ),
  LLM_RATE_LIMITED: c(
    'AIの利用上限',
    'AIサービスの利用回数の上限に達しました。',
    '続くようなら契約上限の引き上げを検討してください。',
  ),
  LLM_TIMEOUT: c(
    'AIの応答が遅い',
    'AIサービスの応答が時間内に返りませんでした。',
    '続くようならAIサービスの状態を確認してください。',
  ),
  LLM_INVALID_OUTPUT: c(
    'AIの出力が不正',
    'AIの出力を読み取れませんでした。',
    '続くようならアラートを確認してください。',
  ),
  LLM_NOT_CONFIGURED: c(
    'AIの設定（キー・モデル）',
    'AIサービスのキーが設定されていないか、キーやモデル名が受け付けられませんでした。',
    '概要の「設定の状態」に原因が出ています。AIサービスのキーとモデル名の設定を直し、再起動してください。',
  ),
  LLM_UNREACHABLE: c(
    'AIに届かない',
    'このサーバーからAIサービスに接続できませんでした（名前解決・接続拒否・プロキシ・証明書など）。',
    '概要の「設定の状態」に原因が出ています。ネットワークとプロキシの設定を確認してください。',
  ),
  LLM_COST_LIMIT: c(
    '費用の上限',
    '今日または今月のAI費用の上限に達したため返答を止めました。',
    '上限を見直すか、翌日（翌月）まで待ってください。',
  ),
  DB_UNAVAILABLE: c(
    'データベースに接続できない',
    'データベースに接続できませんでした。',
    'データベースの状態を確認してください。',
  ),
  SESSION_STATE_UNAVAILABLE: c(
    '会話の状態を読めない',
    '確認待ちなど会話の状態を読めませんでした。',
    'データベースの状態を確認してください。',
  ),
  EXTERNAL_API_FAILED: c(
    '外部サービスの失敗',
    'チャットなど外部サービスの呼び出しに失敗しました。',
    '外部サービスの状態を確認してください。',
  ),
  VALIDATION_FAILED: c('入力の不備', '機能に渡す値が正しくありませんでした。', NONE),
  PERMISSION_DENIED: c('権限なし', '権限がないため実行しませんでした。', NONE),
  BUDGET_EXCEEDED: c(
    '処理の上限',
    '1回の依頼で使える処理の上限に達しました。',
    '本人に依頼を分けるよう案内してください。',
  ),
  INTERNAL: c('内部エラー', '想定外のエラーが起きました。', 'エラーIDでログを検索してください。'),
  // Confirmations
  S_USER_APPROVED: c('承認された', '本人が確認に「はい」と答えました。'),
  S_USER_DENIED: c('取り消された', '本人が確認に「いいえ」と答えました。'),
  S_SECOND_CONFIRMATION: c('2回目の確認', '1回目の承認のあと、2回目の確認を求めました。'),
  S_ANSWER_BEFORE_QUESTION: c(
    '質問より前の返事',
    '確認の質問が届く前に送られた返事のため、答えとして扱いませんでした。',
  ),
  S_PENDING_REMINDER: c('確認のお知らせ', '答えのない確認について、あらためて知らせました。'),
  S_PENDING_EXPIRED: c(
    '確認の期限切れ',
    '期限までに答えがなかったため、何も実行しませんでした。',
    '必要なら本人にもう一度頼むよう伝えてください。',
  ),
  S_ALREADY_DECIDED: c('回答済みの確認', 'すでに答えの出た確認への返事のため、何もしませんでした。'),
  S_NOT_YOURS: c('本人以外の回答', '依頼した本人以外が確認に答えようとしたため、受け付けませんでした。'),
  S_SHADOW_NOT_EXECUTED: c('試験運用（実行なし）', '試験運用中のため、承認されても実行しませんでした。'),
  S_CHANGE_RECONFIRM: c('変更の再確認', '確認中に内容が変わったため、あらためて確認しました。'),
  S_CLARIFICATION_LOOP_ENDED: c(
    '質問を打ち切り',
    '質問のやり取りが続いたため打ち切りました。',
    '本人に依頼を具体的に書き直すよう案内してください。',
  ),
  // Answers and execution
  B_TEXT_RESPONSE: c('返答', 'ボットが文章で答えました。'),
  B_CLARIFICATION: c('質問', 'ボットが依頼の内容を質問しました。'),
  T_EXECUTED: c('実行した', '機能を実行しました。'),
  T_CLARIFICATION: c('実行前の質問', '実行に必要な情報を質問しました。'),
  T_UNKNOWN_PERSON: c(
    '名簿にない名前',
    '依頼に出てきた名前に当てはまるメンバーがいなかったため、誰のことか本人に聞き返しました（権限の問題ではありません）。',
    '同じ名前が続くなら、ディレクトリに読み方や別名を登録してください。',
  ),
  T_UNKNOWN_DEPARTMENT: c(
    '名簿にない部署',
    '依頼に出てきた部署名に当てはまる部署がない（または複数ある）ため、どの部署か本人に聞き返しました。',
    '同じ呼び方が続くなら、ディレクトリの部署に別名（aliases）を登録してください。',
  ),
  T_TOOL_FAILED: c(
    '実行に失敗',
    '機能を実行しましたが失敗しました。',
    'エラーIDでログを検索し、本人に結果を伝えてください。',
  ),
  // Per-sender budget
  BUDGET_SENDER_MINUTE: c('1分あたりの上限', '1分間の依頼数の上限を超えたため、返答を控えました。'),
  BUDGET_SENDER_DAY: c(
    '1日あたりの上限',
    '1日の依頼数の上限を超えたため、返答を控えました。',
    '必要なら上限の設定を見直してください。',
  ),
  BUDGET_SENDER_COST: c(
    '1日の費用の上限',
    'この人の1日のAI費用の上限を超えたため、返答を控えました。',
    '必要なら上限の設定を見直してください。',
  ),
  // Delivery
  O_RECONCILED: c('送信済みを確認', '以前の試行の返答がルームにあったため、再送しませんでした。'),
  O_GAVE_UP: c(
    '処理をあきらめた',
    '何度試しても処理できず、本人にお詫びを送りました。',
    '「失敗した処理」で原因を確認してください。',
  ),
  O_MAYBE_UNDELIVERED: c(
    '届いたか不明',
    '返答が届いたか確かめられず、本人に知らせました。',
    'チャットサービスの状態を確認してください。',
  ),
  // Notices
  P_REMINDER: c('リマインダー', '頼まれていたリマインダーを送りました。'),
  P_DEADLINE_REMINDER: c('期限のお知らせ', 'タスクの期限を知らせました。'),
  P_DAILY_DIGEST: c('日次のまとめ', '1日のまとめを送りました。'),
  P_GOAL_CHECKIN: c('目標の振り返り', '目標の進み具合をたずねました。'),
  P_TASK_DUE_CHANGED: c(
    '期限変更のお知らせ',
    '頼んだタスクの期限がほかの人に変えられたことを、頼んだ人に知らせました。',
  ),
  // Background work
  W_DONE: c('バックグラウンド処理の完了', 'バックグラウンド処理が終わり、結果を報告しました。'),
  W_ERROR: c(
    'バックグラウンド処理のエラー',
    'バックグラウンド処理がエラーで止まりました。',
    'エラーIDでログを検索してください。',
  ),
  W_ABANDONED: c(
    'バックグラウンド処理を断念',
    '何度試しても処理が止まるため、あきらめました。',
    '「失敗した処理」で原因を確認してください。',
  ),
  W_REQUESTER_LEFT: c('依頼者が退職', '依頼した人が組織を離れたため、処理を取りやめました。'),
  W_CONFIRMATION_DECLINED: c('確認で取り消し', '途中の確認で取り消されたため、処理を止めました。'),
  W_STEP_FAILED: c(
    '途中の手順で失敗',
    '処理の途中の手順が失敗したため止めました。',
    '結果の報告を確認し、必要なら本人に伝えてください。',
  ),
  W_CANCELLED: c('処理の取り消し', '処理が取り消されました。'),
};

/** Label, explanation and next step of a code; a code missing from the table reads 「その他」, never raw. */
export function reasonInfo(code: string | null | undefined): CodeInfo | null {
  if (!code) return null;
  return (
    (REASON_INFO as Record<string, CodeInfo>)[code] ??
    c('その他', '分類されていない理由です。', 'ログを確認してください。')
  );
}

/**
 * The reason filter's groups: what happened (blocked, denied, asked, failed …), each code in exactly one
 * (tests/server/admin-labels.test.ts). The page lists the groups in this order, their codes in Japanese order.
 */
export const REASON_GROUPS: readonly { label: string; codes: readonly RecordedCode[] }[] = [
  {
    label: 'ブロックした',
    codes: [
      'G_UNKNOWN_TOOL',
      'G_TOOL_DISABLED',
      'G_CONSTITUTION_NO_REASONING',
      'G_CONSTITUTION_SHORT_REASONING',
      'G_CONSTITUTION_PERMISSION_CLAIM',
      'G_NG_PATTERN',
      'G_CONFIDENTIAL',
      'G_PERSONAL_IDENTIFIER',
      'G_DANGEROUS_CRITICAL',
      'G_POLICY_BLOCK',
      'G_CONFIDENCE_VERY_LOW',
      'G_POLICIES_UNAVAILABLE',
    ],
  },
  {
    label: '権限で断った',
    codes: [
      'Z_UNKNOWN_TOOL',
      'Z_LEVEL_TOO_LOW',
      'Z_PUBLIC_NO_EFFECTS',
      'Z_PUBLIC_ROOM',
      'Z_STRANGER',
      'Z_OUT_OF_SCOPE_USER',
      'Z_OUT_OF_SCOPE_DEPARTMENT',
      'Z_UNKNOWN_TARGET',
      'Z_UNKNOWN_LEVEL',
      'Z_TOP_SECRET',
      'Z_LOOKUP_ERROR',
      'PERMISSION_DENIED',
    ],
  },
  {
    label: '確認・質問した',
    codes: [
      'G_DANGEROUS_HIGH',
      'G_DANGEROUS_MEDIUM',
      'G_TOOL_REQUIRES_CONFIRMATION',
      'G_POLICY_CONFIRM',
      'G_CONFIDENCE_LOW',
      'G_CONFIDENCE_MEDIUM',
      'G_AMOUNT_HIGH',
      'G_AMOUNT_VERY_HIGH',
      'G_RECIPIENTS_MANY',
      'G_RECIPIENTS_MASS',
      'G_RECIPIENTS_ALL',
      'G_DELETE',
      'G_DELETE_BULK',
      'G_PARAM_UNFIXABLE',
      'G_DATE_PAST',
      'G_DATE_FAR_FUTURE',
      'G_STRICT_MODE_CONFIRM',
      'Z_CONFIRM_PERSON',
      'Z_CONFIRM_ORG_WIDE',
      'B_CLARIFICATION',
      'T_CLARIFICATION',
      'T_UNKNOWN_PERSON',
      'T_UNKNOWN_DEPARTMENT',
    ],
  },
  {
    label: '失敗した',
    codes: [
      'LLM_UNAVAILABLE',
      'LLM_RATE_LIMITED',
      'LLM_TIMEOUT',
      'LLM_INVALID_OUTPUT',
      'LLM_NOT_CONFIGURED',
      'LLM_UNREACHABLE',
      'DB_UNAVAILABLE',
      'SESSION_STATE_UNAVAILABLE',
      'EXTERNAL_API_FAILED',
      'VALIDATION_FAILED',
      'INTERNAL',
      'T_TOOL_FAILED',
      'O_GAVE_UP',
      'O_MAYBE_UNDELIVERED',
    ],
  },
  {
    label: '上限で控えた',
    codes: ['LLM_COST_LIMIT', 'BUDGET_EXCEEDED', 'BUDGET_SENDER_MINUTE', 'BUDGET_SENDER_DAY', 'BUDGET_SENDER_COST'],
  },
  {
    label: '確認への答え',
    codes: [
      'S_USER_APPROVED',
      'S_USER_DENIED',
      'S_SECOND_CONFIRMATION',
      'S_ANSWER_BEFORE_QUESTION',
      'S_PENDING_REMINDER',
      'S_PENDING_EXPIRED',
      'S_ALREADY_DECIDED',
      'S_NOT_YOURS',
      'S_SHADOW_NOT_EXECUTED',
      'S_CHANGE_RECONFIRM',
      'S_CLARIFICATION_LOOP_ENDED',
    ],
  },
  {
    label: '返答・実行した',
    codes: [
      'G_OK',
      'G_REPLY_OK',
      'G_REPLY_MARKUP_NEUTRALISED',
      'G_REPLY_UNSUPPORTED_CLAIM',
      'G_PARAM_FIXED',
      'Z_OK',
      'B_TEXT_RESPONSE',
      'T_EXECUTED',
      'O_RECONCILED',
    ],
  },
  {
    label: '通知',
    codes: ['P_REMINDER', 'P_DEADLINE_REMINDER', 'P_DAILY_DIGEST', 'P_GOAL_CHECKIN', 'P_TASK_DUE_CHANGED'],
  },
  {
    label: 'バックグラウンド処理',
    codes: [
      'W_DONE',
      'W_ERROR',
      'W_ABANDONED',
      'W_REQUESTER_LEFT',
      'W_CONFIRMATION_DECLINED',
      'W_STEP_FAILED',
      'W_CANCELLED',
    ],
  },
];

const JAPANESE = new Intl.Collator('ja');

/** The reason filter's options: groups in order, each group's reasons by label in Japanese collation. */
export function reasonOptions(): { label: string; reasons: { code: string; label: string }[] }[] {
  return REASON_GROUPS.map((g) => ({
    label: g.label,
    reasons: g.codes
      .map((code) => ({ code, label: REASON_INFO[code].label }))
      .sort((a, b) => JAPANESE.compare(a.label, b.label)),
  }));
}

/** Levels (R-Z1) in words: who they are for and the data they let a person see (src/authorization/scope.ts). */
export const LEVEL_LABELS: Readonly<Record<number, { label: string; scope: string }>> = {
  1: { label: '業務委託', scope: '自分の部署のみ' },
  2: { label: '一般社員', scope: '自分の部署のみ' },
  3: { label: 'リーダー・課長', scope: '自分の部署と直下の部署' },
  4: { label: '部長・幹部', scope: '自分の部署と配下のすべての部署' },
  5: { label: '取締役・管理部', scope: '組織全体（極秘の部署を除く）' },
  6: { label: '代表・CFO', scope: '組織全体' },
};

/** Chat services in words. */
export const PLATFORM_LABELS: Readonly<Record<string, string>> = {
  chatwork: 'ChatWork',
  discord: 'Discord',
  console: 'コンソール',
};

/** Every tool in a few words, for the policies page (kept complete by tests/server/admin-labels.test.ts). */
export const TOOL_LABELS: Readonly<Record<string, string>> = {
  create_task: 'タスクの作成',
  complete_task: 'タスクの完了',
  search_tasks: 'タスクの検索',
  change_task: 'タスクの変更',
  cancel_task: 'タスクの取り消し',
  create_reminder: 'リマインダーの作成',
  list_reminders: 'リマインダーの一覧',
  cancel_reminder: 'リマインダーの取り消し',
  create_schedule: '定期リマインドの作成',
  create_room_schedule: 'ルームへの定期連絡の作成',
  list_schedules: '定期リマインドの一覧',
  pause_schedule: '定期リマインドの一時停止',
  resume_schedule: '定期リマインドの再開',
  change_schedule: '定期リマインドの変更',
  cancel_schedule: '定期リマインドの取り消し',
  snooze_reminder: 'リマインドの先送り',
  save_memory: 'メモの保存',
  query_memory: 'メモの検索',
  delete_memory: 'メモの削除',
  start_goal_setting: '目標の設定',
  report_goal_progress: '目標の進み具合の報告',
  view_goals: '目標の確認',
  break_goal_into_tasks: '目標をタスクに分解',
  search_knowledge: '社内資料の検索',
  set_notice_preference: '定期通知の設定の変更',
  get_notice_preferences: '定期通知の設定の確認',
  announce: '複数の人への連絡',
  lookup_person: '人や部署の検索',
  team_overview: 'チームの状況',
  start_work: 'バックグラウンド処理の開始',
  work_status: 'バックグラウンド処理の進み具合',
  cancel_work: 'バックグラウンド処理の取り消し',
  save_artifact: '成果物の保存',
};

/** Turn kinds (turn_records.kind). */
export const KIND_LABELS: Readonly<Record<string, string>> = {
  user_request: '会話',
  notification: '通知',
  work: 'バックグラウンド処理',
};

/** Decisions (turn_records.decision), the shadow forms included. */
export const DECISION_TEXT: Readonly<Record<string, string>> = {
  ...({
    REPLY: '返答',
    CLARIFY: '質問',
    CONFIRM: '確認待ち',
    EXECUTED: '実行',
    BLOCK: 'ブロック',
    DENIED: '権限で拒否',
    ERROR: 'エラー',
    REFUSED: '受付せず',
    ENDED: '打ち切り',
    CANCELLED: '取り消し',
    EXPIRED: '期限切れ',
    IGNORED: '対象外',
    REMINDER: '確認のお知らせ',
    DELIVERED_EARLIER: '送信済み',
  } satisfies Record<Exclude<Uppercase<DecisionKind>, 'BLOCKED'> | 'BLOCK', string>),
  NOTICE: '通知',
  NOTICE_BLOCKED: '通知を止めた',
  SHADOW_NOTICE: '試験運用: 通知',
  SHADOW_CONFIRM: '試験運用: 確認待ち',
  SHADOW_BLOCK: '試験運用: ブロック',
  SHADOW_EXECUTED: '試験運用: 実行',
  SHADOW_REPLY: '試験運用: 返答',
  SHADOW_DENIED: '試験運用: 権限で拒否',
  SHADOW_CLARIFY: '試験運用: 質問',
  SHADOW_ERROR: '試験運用: エラー',
};

/** Guardian actions, gate results and confirmation states. */
export const ACTION_LABELS: Readonly<Record<string, string>> = {
  ALLOW: '許可',
  CONFIRM: '確認',
  BLOCK: 'ブロック',
  MODIFY: '修正して許可',
  PASS: '該当なし',
  ALLOWED: '許可',
  DENIED: '拒否',
  ok: '成功',
  error: '失敗',
  failed: '失敗',
  skipped: '実行せず',
};
export const STATUS_LABELS: Readonly<Record<string, string>> = {
  pending: '回答待ち',
  approved: '承認済み（実行待ち）',
  executed: '実行済み',
  cancelled: '取り消し',
  expired: '期限切れ',
  failed: '実行に失敗',
};

/** Who made the final decision (turn_records.finalDecider). */
export const DECIDER_LABELS: Readonly<Record<string, string>> = {
  SYSTEM: 'ルール',
  USER: '本人',
  LLM: 'ボット',
};

/** LLM call purposes (llm_usage.purpose) grouped as the overview's cost shows them. */
export function purposeGroup(purpose: string, turnKind: string | null): string {
  if (turnKind === 'work') return 'バックグラウンド処理';
  if (purpose === 'conversation_summary') return '会話の要約';
  if (purpose === 'self_critique') return '自己批判';
  if (purpose === 'notice') return '通知文の作成';
  return '会話';
}
export const PURPOSE_LABELS: Readonly<Record<string, string>> = {
  turn: '依頼の判断',
  tool_search: '機能の検索',
  rewrite_claim: '返答の書き直し',
  report_confirmed: '承認後の報告',
  notice: '通知文の作成',
  self_critique: '自己批判',
  conversation_summary: '会話の要約',
};
export function purposeLabel(purpose: string): string {
  const step = /^step_(\d+)$/.exec(purpose);
  return step ? `手順 ${step[1]}` : (PURPOSE_LABELS[purpose] ?? 'その他');
}

/** Everything the page needs to show words instead of codes (GET /admin/api/labels). */
export function pageLabels(): Record<string, unknown> {
  return {
    reasons: REASON_INFO,
    reasonGroups: reasonOptions(),
    kinds: KIND_LABELS,
    decisions: DECISION_TEXT,
    actions: ACTION_LABELS,
    statuses: STATUS_LABELS,
    deciders: DECIDER_LABELS,
    purposes: PURPOSE_LABELS,
    rules: RULE_LABELS,
  };
}
