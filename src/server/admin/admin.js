// Hisho 管理画面: plain browser JavaScript over /admin/api (session cookie). Charts: uPlot.
// Every code is shown in words from /admin/api/labels; every time in the organisation's time zone; every cost
// through HishoFormat.formatCost (format.js, loaded before this file). On a phone, tables read as cards: each cell
// carries its column's heading (labelTables).
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
  const esc = (v) => String(v === null || v === undefined ? '' : v).replace(/[&<>"]/g, (c) => ESC[c]);
  let L = { timezone: 'Asia/Tokyo', reasons: {}, kinds: {}, decisions: {}, actions: {}, statuses: {}, rules: {} };
  const fmt = (opts) => new Intl.DateTimeFormat('ja-JP', Object.assign({ timeZone: L.timezone }, opts));
  const when = (iso) =>
    iso
      ? fmt({ year: 'numeric', month: 'numeric', day: 'numeric', hour: '2-digit', minute: '2-digit' }).format(
          new Date(iso),
        )
      : '';
  const pct = (x) => (x === null || x === undefined ? 'なし' : `${(x * 100).toFixed(1)}%`);
  const usd = (v) => window.HishoFormat.formatCost(v);
  const num = (v, digits) => `<span class="num">${digits === undefined ? esc(v) : Number(v).toFixed(digits)}</span>`;
  const word = (table, v, other) => (v === null || v === undefined ? '' : table[v] || other || 'その他');
  /** A decision or action as a coloured pill in words. */
  const pill = (v, table) => (v ? `<span class="pill ${esc(v)}">${esc(word(table || L.actions, v))}</span>` : '');
  const decision = (d) => pill(d, L.decisions);
  /** A reason code as its label; the explanation and next step on hover. */
  const reason = (code) => {
    if (!code) return '';
    const r = L.reasons[code] || { label: 'その他', explain: '分類されていない理由です。', next: '' };
    return `<span class="reason" title="${esc(r.explain + (r.next ? ` ${r.next}` : ''))}">${esc(r.label)}</span>`;
  };
  const kind = (k) => esc(word(L.kinds, k));
  const person = (id, name) =>
    id ? `<a class="name" href="#member/${esc(id)}">${esc(name || '（名前なし）')}</a>` : esc(name || '');
  const room = (id, name) => `<a href="#room/${esc(id)}">${esc(name || id)}</a>`;
  /** One table row; cells are HTML already escaped by the caller. */
  const tr = (cells, attrs) => `<tr${attrs || ''}>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  const rowsOr = (html, cols, empty) => html || `<tr><td colspan="${cols}">${esc(empty)}</td></tr>`;
  const table = (heads, body) =>
    `<table><thead><tr>${heads.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`;
  const card = (k, v, sub, href) =>
    `<div class="card"><div class="k">${esc(k)}</div>` +
    `<div class="v">${href ? `<a href="${href}">${esc(v)}</a>` : esc(v)}</div>` +
    `${sub ? `<div class="sub">${esc(sub)}</div>` : ''}</div>`;

  async function api(path) {
    let res;
    try {
      res = await fetch(`/admin/api/${path}`, { credentials: 'same-origin' });
    } catch {
      throw new Error('サーバーに接続できませんでした。サービスが動いているか確かめて、再読み込みしてください。');
    }
    if (res.status === 401) {
      location.href = `/admin/login?next=${encodeURIComponent('/admin' + location.hash)}`;
      throw new Error('login');
    }
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.error || 'サーバーでエラーが起きました。しばらくして再読み込みしてください。');
    return body;
  }

  // ── Overview ──
  const charts = {};
  let range = '24h';
  /** Time axis and legend in the organisation's time zone, Japanese formats. */
  function timeOptions() {
    const tick = range === '24h' ? fmt({ hour: 'numeric' }) : fmt({ month: 'numeric', day: 'numeric' });
    const full = fmt({ month: 'numeric', day: 'numeric', weekday: 'short', hour: '2-digit', minute: '2-digit' });
    return {
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), L.timezone),
      x: {
        label: '日時',
        value: (_u, ts) => (ts === null || ts === undefined ? '' : full.format(new Date(ts * 1000))),
      },
      axis: { values: (_u, splits) => splits.map((s) => tick.format(new Date(s * 1000))) },
    };
  }
  /** A chart as wide as its box (a phone's screen or a wide window's column). */
  const chartWidth = (el) => Math.max(200, el.clientWidth - 4);
  const resizing = new ResizeObserver((entries) => {
    for (const e of entries) {
      const u = charts[e.target.id];
      if (u && Math.abs(u.width - chartWidth(e.target)) > 2) u.setSize({ width: chartWidth(e.target), height: 220 });
    }
  });
  function chart(id, series, data, opts) {
    const el = $(id);
    if (charts[id]) charts[id].destroy();
    el.innerHTML = '';
    const o = opts || {};
    const t = timeOptions();
    const axes = o.axes || [{}, {}];
    axes[0] = Object.assign({}, axes[0], t.axis);
    const config = {
      width: chartWidth(el),
      height: 220,
      tzDate: t.tzDate,
      series: [t.x].concat(series),
      axes,
      scales: o.scales,
    };
    charts[id] = new uPlot(config, data, el);
    resizing.observe(el);
    el.dataset.points = String(data[0].length);
    el.dataset.total = String(data[1].reduce((a, b) => a + (b || 0), 0));
  }
  /** The setup section: what is set up and what is not, problems first (app/setup-status.ts). */
  async function setup() {
    const s = await api('setup');
    const order = { problem: 0, warn: 1, ok: 2, off: 3 };
    const items = s.items.slice().sort((a, b) => order[a.state] - order[b.state]);
    const t = s.today;
    const today =
      t.aiFailed > 0
        ? `<p class="today">${
            t.aiFailed === t.turns
              ? `今日の会話 ${t.turns} 件はすべて、AIが使えないため答えられていません。`
              : `今日の会話 ${t.turns} 件のうち ${t.aiFailed} 件は、AIが使えないため答えられていません。`
          }</p>`
        : '';
    $('setup').innerHTML =
      `<h3>設定の状態</h3>${today}<ul>` +
      items
        .map((i) => `<li class="${esc(i.state)}" data-key="${esc(i.key)}"><b>${esc(i.label)}</b> ${esc(i.text)}</li>`)
        .join('') +
      '</ul>';
  }
  /** Dollars (formatCost) and yen side by side: $0.0123（¥1.85）; yen amounts of ¥100 or more without decimals. */
  const money = (v) => {
    const y = Number(v.yen || 0);
    const yenText = y >= 100 ? Math.round(y).toLocaleString('ja-JP') : y.toFixed(2);
    return `${usd(v.usd)}（¥${yenText}）`;
  };
  /** Cost per conversation, the month's forecast and the cost by kind of call and model (issue 39). */
  async function costPlan() {
    const c = await api(`cost?range=${range}`);
    const period = c.days === 1 ? '今日' : '30日';
    const each = (r) => (r.perConversation ? num(money(r.perConversation)) : '—');
    const rows = c.rows.map((r) => tr([esc(r.kind), esc(r.model), num(r.calls), num(money(r)), each(r)])).join('');
    const perConversation = c.perConversation ? money(c.perConversation) : 'なし';
    const counted = `会話 ${c.conversations} 件（確認への返事も1件）・要約と自己批判を含む`;
    $('cost-plan').innerHTML =
      `<div class="cards">${card(`会話あたりの費用（${period}）`, perConversation, counted)}` +
      `${card('今月の費用', money(c.monthToDate))}` +
      `${card('今月の見込み', money(c.forecast), `直近7日の1日平均で月末まで・1ドル${c.jpyPerUsd}円`)}</div>` +
      `<div class="chart"><h3>費用（${period}・種類とモデル別）</h3>` +
      `${table(['種類', 'モデル', '呼び出し', '費用', '会話あたり'], rowsOr(rows, 5, 'この期間の費用はありません。'))}</div>`;
  }
  async function overview() {
    setup().catch(showError);
    const o = await api(`overview?range=${range}`);
    const t = o.today;
    const of = (n) => (t.turns ? `${pct(n / t.turns)}` : 'なし');
    const answered = `承認 ${t.approved}・取り消し ${t.cancelled}・期限切れ ${t.expired}・回答待ち ${t.waiting}`;
    $('today').innerHTML = [
      card('今日の会話', `${t.turns} 件`),
      card('平均処理時間', t.avg_ms === null ? 'なし' : `${Math.round(t.avg_ms)} ミリ秒`),
      card('確信度の平均', t.avg_confidence === null ? 'なし' : t.avg_confidence.toFixed(2)),
      card('ブロック率（今日）', of(t.blocks), `ルールで止めた会話 ${t.blocks} 件`),
      card('権限による拒否率（今日）', of(t.denials), `権限で断った会話 ${t.denials} 件`),
      card('名簿にない名前（今日）', `${t.unknown_names} 件`, '誰のことか聞き返した会話（権限の問題ではありません）'),
      card('確認率（今日）', of(t.confirms), `確認 ${t.asked} 件: ${answered}`),
      card('費用（今日）', usd(t.cost_today)),
      card('費用（今月）', usd(t.cost_month)),
      card('キャッシュ読込の割合（今日）', pct(t.cache_share), '入力トークンのうちキャッシュから読んだ割合'),
      card('処理待ち', `${t.queue} 件`),
      card('失敗した処理', `${o.failedCount} 件`, '一覧を開く', '#failed'),
    ].join('');
    const costRows = (list) =>
      rowsOr(list.map((c) => tr([esc(c.name), num(usd(c.usd))])).join(''), 2, 'この期間の費用はありません。');
    const period = range === '24h' ? '今日' : '30日';
    $('cost-breakdown').innerHTML =
      `<div class="chart"><h3>費用の内訳（${period}・モデル別）</h3>${table(['モデル', '費用'], costRows(o.cost.byModel))}</div>` +
      `<div class="chart"><h3>費用の内訳（${period}・用途別）</h3>${table(['用途', '費用'], costRows(o.cost.byPurpose))}</div>`;
    await costPlan();
    const b = o.buckets;
    const xs = b.map((x) => Date.parse(x.t) / 1000);
    const share = (v) => (v === null ? null : v * 100);
    chart('c-turns', [{ label: '会話', stroke: '#2c7be5', fill: 'rgba(44,123,229,.15)' }], [xs, b.map((x) => x.turns)]);
    chart(
      'c-latency',
      [
        { label: '中央値（ミリ秒）', stroke: '#2c7be5' },
        { label: '95%の上限（ミリ秒）', stroke: '#e55353' },
      ],
      [xs, b.map((x) => x.p50Ms), b.map((x) => x.p95Ms)],
    );
    chart(
      'c-rates',
      [
        { label: '確認率 %', stroke: '#f0ad4e' },
        { label: 'ブロック率 %', stroke: '#e55353' },
        { label: '権限による拒否率 %', stroke: '#6f42c1' },
      ],
      [xs, b.map((x) => share(x.confirmRate)), b.map((x) => share(x.blockRate)), b.map((x) => share(x.denialRate))],
    );
    chart(
      'c-cost',
      [
        { label: '費用（USD）', stroke: '#6f42c1', scale: 'usd', value: (_u, v) => (v === null ? '' : usd(v)) },
        { label: 'キャッシュ読込 %', stroke: '#20a779', scale: 'pct' },
      ],
      [xs, b.map((x) => x.costUsd), b.map((x) => share(x.cacheReadShare))],
      {
        scales: { usd: {}, pct: { range: [0, 100] } },
        axes: [{}, { scale: 'usd' }, { scale: 'pct', side: 1, grid: { show: false } }],
      },
    );
    chart('c-queue', [{ label: '件数', stroke: '#555' }], [xs, b.map((x) => x.queueDepth)]);
  }
  document.querySelectorAll('.range button').forEach((btn) =>
    btn.addEventListener('click', () => {
      range = btn.dataset.range;
      document.querySelectorAll('.range button').forEach((x) => x.classList.toggle('on', x === btn));
      overview().catch(showError);
    }),
  );

  // ── Audit log ──
  function auditRows(turns) {
    return turns
      .map((r) =>
        tr(
          [
            esc(when(r.createdAt)),
            kind(r.kind),
            person(r.memberId, r.member),
            room(r.roomId, r.room),
            decision(r.decision),
            reason(r.reasonCode),
            num(r.totalMs),
            num(usd(r.costUsd)),
            esc(r.input),
            r.critique ? pill(r.critique, CRITIQUE) : '',
          ],
          ` data-id="${esc(r.id)}" class="link-row"`,
        ),
      )
      .join('');
  }
  const AUDIT_HEADS = [
    '日時',
    '種類',
    '人',
    'ルーム',
    '判断',
    '理由',
    '処理時間（ミリ秒）',
    '費用',
    '依頼',
    '自己批判',
  ];
  const CRITIQUE = { ok: '問題なし', concern: '懸念あり', failed: '実施できず', skipped: '対象外' };
  function linkRows(container) {
    container.querySelectorAll('tr[data-id]').forEach((row) =>
      row.addEventListener('click', (e) => {
        if (e.target.closest('a')) return;
        location.hash = `turn/${row.dataset.id}`;
      }),
    );
  }
  function fillFilterOptions() {
    // Grouped by what happened, in Japanese order (the server sorts: the browser's collation may not be Japanese).
    const reasons = $('audit-form').elements.namedItem('reason');
    reasons.innerHTML =
      '<option value="">（すべて）</option>' +
      (L.reasonGroups || [])
        .map(
          (g) =>
            `<optgroup label="${esc(g.label)}">` +
            g.reasons.map((r) => `<option value="${esc(r.code)}">${esc(r.label)}</option>`).join('') +
            '</optgroup>',
        )
        .join('');
    const decisions = $('audit-form').elements.namedItem('decision');
    decisions.innerHTML =
      '<option value="">（すべて）</option>' +
      Object.entries(L.decisions)
        .filter(([d]) => !d.startsWith('SHADOW_'))
        .map(([d, label]) => `<option value="${esc(d)}">${esc(label)}</option>`)
        .join('');
  }
  // A slower earlier search (the tab's first load) must not overwrite a newer one's rows.
  let auditSeq = 0;
  async function audit() {
    const params = new URLSearchParams();
    new FormData($('audit-form')).forEach((v, k) => {
      if (v) params.set(k, String(v));
    });
    const seq = ++auditSeq;
    const { turns } = await api(`audit?${params}`);
    if (seq !== auditSeq) return;
    $('audit-rows').innerHTML = rowsOr(
      auditRows(turns),
      10,
      '該当する記録はありません。条件を変えて検索してください。',
    );
    $('audit-rows').dataset.query = params.toString();
    $('audit-csv').href = `/admin/api/audit.csv?${params}`;
    linkRows($('audit-rows'));
  }
  $('audit-form').addEventListener('submit', (e) => {
    e.preventDefault();
    audit().catch(showError);
  });
  // Days are typed as 2026/11/28 in text fields (a date input shows the browser's own order: mm/dd/yyyy in
  // English); the button opens the browser's calendar and writes the day picked in that form.
  document.querySelectorAll('.day').forEach((box) => {
    const text = box.querySelector('input');
    const picker = document.createElement('input');
    picker.type = 'date';
    picker.tabIndex = -1;
    picker.setAttribute('aria-hidden', 'true');
    box.appendChild(picker);
    picker.addEventListener('change', () => {
      if (picker.value) text.value = picker.value.replace(/-/g, '/');
    });
    box.querySelector('.pick').addEventListener('click', () => {
      const m = /^(\d{4})\D(\d{1,2})\D(\d{1,2})/.exec(text.value.normalize('NFKC'));
      picker.value = m ? `${m[1]}-${m[2].padStart(2, '0')}-${m[3].padStart(2, '0')}` : '';
      try {
        picker.showPicker();
      } catch {
        picker.click();
      }
    });
  });

  // ── Turn inspector: the story of one turn ──
  const block = (title, html, cls) => `<div class="step${cls ? ` ${cls}` : ''}"><h3>${esc(title)}</h3>${html}</div>`;
  const para = (text) => `<p>${esc(text)}</p>`;
  const quote = (text) => `<pre>${esc(text)}</pre>`;
  const UNDERSTOOD = {
    intent_understanding: '依頼の理解',
    context_used: '使った情報',
    constitution_check: '守るべき原則の確認',
    alternatives_considered: '検討したほかの案',
    risks: '気をつけた点',
    uncertainty: 'はっきりしない点',
    why_this_tool: 'この操作を選んだ理由',
  };
  function understood(t) {
    const r = t.reasoning;
    if (!r || typeof r !== 'object') {
      return para(
        t.finalDecider === 'USER'
          ? 'この回は本人の答え（ボタンまたは「はい」「いいえ」）で決まりました。ボットは判断していません。'
          : 'ボットの判断はありません（ルールだけで決まりました）。',
      );
    }
    const rows = Object.entries(r)
      .filter(([, v]) => v !== null && v !== undefined && v !== '')
      .map(([k, v]) =>
        tr([
          esc(UNDERSTOOD[k] || '補足'),
          esc(Array.isArray(v) ? v.join('、') : typeof v === 'object' ? '（詳細あり）' : v),
        ]),
      )
      .join('');
    const c = t.confidence && typeof t.confidence.overall === 'number' ? t.confidence.overall : null;
    return `${table(['項目', '内容'], rows)}<p>確信度: ${c === null ? '記載なし' : `${Math.round(c * 100)}%`}</p>`;
  }
  function proposalInWords(p, pendings) {
    const pending = (pendings || []).find((x) => x.id === p.pendingActionId) || (pendings || [])[0];
    if (pending && pending.effect) return quote(pending.effect);
    if (p.words) return quote(p.words);
    const values = Object.values(p.parameters || {})
      .filter((v) => v !== null && v !== undefined && v !== '')
      .map((v) => (typeof v === 'object' ? '（詳細）' : String(v)));
    return para(`操作の内容: ${values.join('・') || '（指定なし）'}`);
  }
  function guardianRules(p) {
    const g = p.guardian || {};
    const trace = (g.trace || [])
      .map((r) =>
        tr([
          esc(r.rule.startsWith('policy:') ? '社内ルール' : L.rules[r.rule] || 'その他の確認'),
          pill(r.outcome),
          r.reasonCode
            ? `${reason(r.reasonCode)}<div class="muted">${esc((L.reasons[r.reasonCode] || {}).explain || '')}</div>`
            : '',
          r.enforced ? '有効' : '試験中（結果に影響しません）',
        ]),
      )
      .join('');
    const verdict = g.action
      ? `<p>結論: ${pill(g.action)} ${reason(g.reasonCode)}</p>`
      : '<p class="muted">この回はルールの確認をしていません。</p>';
    return verdict + (trace ? table(['確認したこと', '結果', '理由', '扱い'], trace) : '');
  }
  function gate(t, proposals) {
    const lines = proposals
      .filter((p) => p.auth)
      .map(
        (p) =>
          `<p>${pill(p.auth.result)} ${reason(p.auth.reasonCode)}: ` +
          `${esc((L.reasons[p.auth.reasonCode] || {}).explain || '')}</p>`,
      );
    return lines.join('') || '<p class="muted">権限の確認はありません（操作の提案がない回です）。</p>';
  }
  function ran(t, proposals) {
    const e = t.execution;
    const lines = [];
    for (const p of proposals) {
      if (p.execution)
        lines.push(
          `<p>${pill(p.execution.status)}${p.execution.ms !== undefined ? `（${esc(p.execution.ms)} ミリ秒）` : ''}</p>`,
        );
    }
    const asked = (t.pending || [])[0];
    if (e && e.status === 'pending_confirmation') {
      lines.push(
        para(
          asked && asked.status !== 'pending'
            ? `この回では実行せず、確認を求めました。その後: ${word(L.statuses, asked.status)}。`
            : '確認の答えを待っています（まだ実行していません）。',
        ),
      );
    } else if (e && e.status === 'not_executed') lines.push(para('実行していません。'));
    else if (e && e.status) lines.push(`<p>${pill(e.status)}</p>`);
    if (t.errorId) lines.push(para(`エラーID ${t.errorId}（ログの検索に使えます）`));
    return lines.join('') || para('何も実行していません。');
  }
  function links(t) {
    const parts = [];
    for (const p of t.pending || []) {
      parts.push(
        `<p>この回の確認: ${esc(word(L.statuses, p.status))}` +
          `（${p.confirmationType === 'double' ? '2回確認' : '1回確認'}・期限 ${esc(when(p.expiresAt))}）</p>`,
      );
    }
    for (const a of t.answers || [])
      parts.push(
        `<p>答えた回: <a href="#turn/${esc(a.id)}">${esc(when(a.createdAt))} ${esc(word(L.decisions, a.decision))}</a></p>`,
      );
    for (const p of t.answered || []) {
      parts.push(
        `<p>この回は確認への答えです（${esc(word(L.statuses, p.status))}）。` +
          `${p.turnId ? `<a href="#turn/${esc(p.turnId)}">確認した回を開く</a>` : ''}</p>` +
          quote(p.effect || p.question),
      );
    }
    return parts.join('');
  }
  function costs(t) {
    const calls = (t.calls || [])
      .map((c) =>
        tr([
          esc(c.purposeLabel),
          esc(c.model),
          num(c.durationMs),
          num(c.inputTokens),
          num(c.cacheReadTokens),
          num(c.outputTokens),
          num(usd(c.costUsd)),
        ]),
      )
      .join('');
    return (
      `<p>合計 ${esc(t.totalMs)} ミリ秒（AI ${esc(t.llmMs)}・操作 ${esc(t.toolsMs)}）・費用 ${usd(t.costUsd)}</p>` +
      (calls
        ? table(['用途', 'モデル', 'ミリ秒', '入力', 'キャッシュ読込', '出力', '費用'], calls)
        : para('AIの呼び出しはありません。'))
    );
  }
  function critique(c) {
    if (!c) return para('この回は自己批判の対象ではありません。');
    if (c.verdict === 'failed')
      return para(
        '自己批判を実施できませんでした（AIが応答しなかったなど）。判断そのものには影響しません。続く場合はアラートを確認してください。',
      );
    const notes = c.concerns || c.notes || c.summary;
    const text = notes ? quote(Array.isArray(notes) ? notes.join('\n') : String(notes)) : '';
    return `<p>${pill(c.verdict, CRITIQUE)}</p>${text}`;
  }
  async function turn(id) {
    $('turn-form').elements.namedItem('turnId').value = id || '';
    $('turn-steps').innerHTML = '';
    if (!id) {
      $('turn-steps').innerHTML = '<p class="muted">監査ログの行を選ぶか、ターンIDを入力してください。</p>';
      return;
    }
    const { turn: t } = await api(`turns/${encodeURIComponent(id)}`);
    const proposals = t.proposals || [];
    const r = L.reasons[t.reasonCode] || {};
    const head =
      `<p>${esc(when(t.createdAt))}・${person(t.memberId, t.member || '組織外の人')}・` +
      `${room(t.roomId, t.room)}・${kind(t.kind)}</p>` +
      `<p class="big">${decision(t.decision)} ${reason(t.reasonCode)}: ${esc(r.explain || '')}</p>` +
      (r.next && r.next !== '対応は不要です。' ? `<p class="next">次にすること: ${esc(r.next)}</p>` : '');
    const claim = t.claimCheck
      ? block(
          '返答の書き直し',
          para('ボットが実行していないことを「しました」と書いたため、送る前に書き直させました。') +
            ((t.claimCheck.claims || []).length ? para(`書き直した表現: ${t.claimCheck.claims.join('、')}`) : ''),
          'warn',
        )
      : '';
    $('turn-steps').innerHTML = [
      block('この回のまとめ', head + links(t)),
      block('1. 依頼', t.inputRedacted ? quote(t.inputRedacted) : para('（本人の発言はありません）')),
      block('2. ボットの理解', understood(t)),
      block(
        '3. 提案された操作',
        proposals.length
          ? proposals.map((p) => proposalInWords(p, (t.pending || []).concat(t.answered || []))).join('')
          : para('操作の提案はありません（文章での返答です）。'),
      ),
      block(
        '4. ルールによる確認',
        proposals.length
          ? proposals.map(guardianRules).join('')
          : `<p>${pill(t.guardianAction)} ${reason(t.guardianReason)}</p>`,
      ),
      block('5. 権限の確認', gate(t, proposals)),
      block('6. 実行したこと', ran(t, proposals)),
      claim,
      block('7. 返答', t.finalReply ? quote(t.finalReply) : para('（返答はありません）')),
      block('時間と費用', costs(t)),
      block('自己批判（判断は変えません）', critique(t.selfCritique)),
    ].join('');
  }
  $('turn-form').addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = `turn/${$('turn-form').elements.namedItem('turnId').value.trim()}`;
  });

  // ── Pending confirmations ──
  function pendingRows(rows) {
    return rows
      .map((p) => {
        const rounds = p.confirmationType === 'double' ? 2 : 1;
        const state =
          p.status === 'approved'
            ? '承認済み・実行待ち'
            : rounds === 2
              ? `2回確認のうち${p.confirmationsGiven}回承認済み`
              : '答えを待っています';
        return tr([
          esc(when(p.createdAt)),
          esc(when(p.expiresAt)),
          person(p.memberId, p.member),
          room(p.roomId, p.room),
          `<pre>${esc(p.effect || p.question)}</pre>`,
          esc(state),
          reason(p.reasonCode),
          p.turnId ? `<a href="#turn/${esc(p.turnId)}">質問した回を開く</a>` : '',
        ]);
      })
      .join('');
  }
  const PENDING_HEADS = ['作成', '期限', '人', 'ルーム', '内容', '状態', '理由', '質問した回'];
  async function pending() {
    const { pending: rows } = await api('pending');
    $('pending-rows').innerHTML = rowsOr(pendingRows(rows), 8, '確認待ちの操作はありません。');
  }

  // ── Schedules, constitution audits, alerts, failed work ──
  const PROBLEMS = {
    no_room: 'ルーム未指定',
    room_not_in_directory: 'ルームがディレクトリにない',
    platform_not_enabled: 'このチャットサービスは無効',
    room_notices_off: 'ルームで通知オフ',
    public_room: '公開ルーム（送信しない）',
  };
  const SCHEDULE_KINDS = {
    daily_digest: '日次のまとめ',
    deadline_reminder: '期限のお知らせ',
    goal_checkin: '目標の振り返り',
  };
  /** Common cron forms in words (「平日 8:30」「毎週月曜 10:00」); anything else as written. */
  function cronWords(cron) {
    const m = /^(\d+) (\d+) \* \* (\*|1-5|[0-6])$/.exec(String(cron).trim());
    if (!m) return `<code>${esc(cron)}</code>`;
    const at = `${m[2]}:${m[1].padStart(2, '0')}`;
    const days = m[3] === '*' ? '毎日' : m[3] === '1-5' ? '平日' : `毎週${'日月火水木金土'[Number(m[3])]}曜`;
    return esc(`${days} ${at}`);
  }
  const RUN_STATUS = { sent: '送信済み', done: '完了', skipped: '送信せず', failed: '失敗', running: '実行中' };
  function lastRun(r) {
    if (!r) return 'まだ動いていません';
    const skipped = r.skipped ? `・送らなかった人 ${esc(r.skipped)}` : '';
    return `${esc(when(r.period))} ${esc(word(RUN_STATUS, r.status))} ${esc(r.recipients)}人${skipped}`;
  }
  async function schedules() {
    const s = await api('schedules');
    $('sched-note').textContent = s.running
      ? ''
      : 'このインスタンスでは定期通知が止まっています。設定で通知を有効にすると動きます。';
    const html = s.schedules
      .map((x) =>
        tr([
          esc(word(SCHEDULE_KINDS, x.kind)),
          cronWords(x.cron),
          esc(x.timezone),
          x.room ? esc(x.room) : '本人あて',
          x.enabled ? '有効' : '無効',
          lastRun(x.lastRun),
          esc(when(x.nextRun)),
          x.problem
            ? `<span class="pill BLOCK">${esc(PROBLEMS[x.problem] || '設定に問題')}</span>`
            : '<span class="pill ok">正常</span>',
        ]),
      )
      .join('');
    $('sched-rows').innerHTML = rowsOr(html, 8, 'スケジュールはありません。');
  }
  const FINDINGS = {
    short_reasoning: '思考過程が短い',
    permission_claim: '権限の判断を口にした',
    asserts_execution: '実行を断定した',
    violation_blocked: '違反をブロック',
    guardian_skipped: 'ルールの確認を経ずに実行',
    auth_skipped: '権限の確認を経ずに実行',
  };
  async function constitution() {
    const c = await api('audits/constitution?days=7');
    $('const-checks').innerHTML = Object.entries(c.checks)
      .map(([k, v]) => card(FINDINGS[k] || 'その他', `${v} 件`))
      .join('');
    const html = c.turns
      .map((t) =>
        tr([
          `<a href="#turn/${esc(t.id)}">${esc(when(t.createdAt))}</a>`,
          decision(t.decision),
          reason(t.reasonCode),
          t.findings.map((f) => `<span class="pill">${esc(FINDINGS[f] || 'その他')}</span>`).join(' '),
        ]),
      )
      .join('');
    $('const-rows').innerHTML = rowsOr(html, 4, '該当はありません。');
  }
  const SEVERITY = { info: 'お知らせ', warn: '注意', critical: '緊急' };
  async function alerts() {
    const { alerts: rows } = await api('alerts');
    const html = rows
      .map((a) =>
        tr([
          esc(when(a.createdAt)),
          esc(a.title || 'アラート'),
          `<span class="pill ${a.severity === 'critical' ? 'ERROR' : ''}">${esc(word(SEVERITY, a.severity))}</span>`,
          esc((a.lines || []).join('／')),
          num(a.repeats),
        ]),
      )
      .join('');
    $('alert-rows').innerHTML = rowsOr(html, 5, 'アラートはありません。');
  }
  async function failed() {
    const { failed: rows } = await api('failed');
    const html = rows
      .map((f) =>
        tr([
          esc(when(f.failedAt)),
          `<code>${esc(f.errorId || 'なし')}</code>`,
          esc(f.what),
          esc(f.cause),
          esc(f.room || ''),
          num(f.attempts),
          esc(when(f.createdAt)),
          f.told === '未送信' ? `<span class="pill ERROR">${esc(f.told)}</span>` : esc(f.told),
        ]),
      )
      .join('');
    $('failed-rows').innerHTML = rowsOr(html, 8, '失敗した処理はありません。');
  }

  // ── The directory: members, rooms and policies (read-only: the directory file is where they change) ──
  async function members() {
    const { members: rows } = await api('members');
    const html = rows
      .map((m) =>
        tr([
          person(m.id, m.name),
          esc(m.department || '（部署なし）'),
          esc(m.title || ''),
          esc(m.levelLabel),
          esc(m.accounts.join('・') || 'なし'),
          m.active ? '在籍' : '<span class="pill BLOCK">無効（ディレクトリにない）</span>',
        ]),
      )
      .join('');
    $('members-rows').innerHTML = rowsOr(html, 6, 'メンバーはいません。ディレクトリのファイルを取り込んでください。');
  }
  async function rooms() {
    const { rooms: rows } = await api('rooms');
    const html = rows
      .map((r) =>
        tr([
          room(r.id, r.name || '（名前なし）'),
          esc(r.service),
          esc(r.authority),
          esc(r.notices),
          r.adminAlerts ? 'ここに送る' : '',
          num(`${r.turns30d} 件`),
        ]),
      )
      .join('');
    $('rooms-rows').innerHTML = rowsOr(html, 6, 'ルームはありません。ディレクトリのファイルに登録してください。');
  }
  async function policies() {
    const { policies: rows } = await api('policies');
    const html = rows.map((p) => tr([esc(p.title), esc(p.content), esc(p.rule), num(p.priority)])).join('');
    $('policies-rows').innerHTML = rowsOr(html, 4, '社内ルールはありません。');
  }
  // Company tools (MCP): each server's declared tools, their policy and state; 「承認する」 pins what it lists now.
  function mcpServers(servers) {
    const html = servers
      .map(
        (s) =>
          `<h3>${esc(s.name)}</h3>` +
          (s.approvable
            ? `<p><button type="button" class="mcp-approve" data-server="${esc(s.id)}">このサーバーのツールを承認する</button></p>`
            : '') +
          table(
            ['ツール', 'ボットが使う名前', '使える人', '動き', '状態', '説明'],
            s.tools
              .map((t) =>
                tr([
                  esc(t.tool),
                  esc(t.modelName),
                  esc(t.level),
                  esc(t.effect),
                  `<span class="pill ${t.state === '有効' ? 'ok' : 'BLOCK'}">${esc(t.state)}</span>` +
                    (t.next ? `<div class="muted">${esc(t.next)}</div>` : ''),
                  esc(t.description),
                ]),
              )
              .join(''),
          ),
      )
      .join('');
    $('mcp-view').innerHTML = html || '<p>外部ツールのサーバーはディレクトリにありません。</p>';
    document
      .querySelectorAll('.mcp-approve')
      .forEach((b) => b.addEventListener('click', () => approveServer(b.getAttribute('data-server')).catch(showError)));
  }
  async function mcp() {
    mcpServers((await api('mcp')).servers);
  }
  async function approveServer(id) {
    const res = await fetch(`/admin/api/mcp/${encodeURIComponent(id)}/approve`, {
      method: 'POST',
      credentials: 'same-origin',
    });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body.error || '承認できませんでした。しばらくして、もう一度押してください。');
    mcpServers(body.servers);
  }
  /** A definition list of facts (label, HTML already escaped); empty values are left out. */
  const facts = (pairs) =>
    `<dl class="facts">${pairs
      .filter(([, v]) => v)
      .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`)
      .join('')}</dl>`;
  function memberFacts(p) {
    return facts([
      ['部署', esc(p.department || '（部署なし）')],
      ['役職', esc(p.title)],
      ['権限レベル', `${esc(p.level)}<div class="muted">見られる範囲: ${esc(p.scope)}</div>`],
      ['連携しているチャット', esc(p.accounts.join('・') || 'なし')],
      [
        '話したルーム',
        p.rooms.map((r) => room(r.id, r.name || `${r.service}のルーム（ディレクトリにない）`)).join('、') ||
          'まだありません',
      ],
      ['呼び名', esc(p.aliases.join('、'))],
      ['定期通知', esc(p.notices)],
      ['通知しない時間', esc(p.quietHours)],
      ['状態', p.active ? '在籍' : '無効（ディレクトリにない）'],
    ]);
  }
  function roomFacts(p) {
    if (!p.inDirectory)
      return `<p class="muted">ディレクトリにないルームです。ディレクトリのファイルに登録すると、名前と設定がここに出ます。</p>`;
    return facts([
      ['チャット', esc(p.service)],
      ['話せる人', esc(p.authority)],
      ['定期通知', esc(p.notices)],
      ['アラートの送り先', p.adminAlerts ? 'このルームに送る' : ''],
      ['話した人', p.members.map((m) => person(m.id, m.name)).join('、') || 'まだいません'],
    ]);
  }

  // ── A member's or a room's page ──
  async function scope(kindOf, id) {
    const el = $(kindOf === 'members' ? 'member-view' : 'room-view');
    el.innerHTML = '';
    const v = await api(`${kindOf}/${encodeURIComponent(id || '')}`);
    const sched = v.schedules
      .map((s) => tr([esc(word(SCHEDULE_KINDS, s.kind)), cronWords(s.cron), s.enabled ? '有効' : '無効']))
      .join('');
    el.innerHTML =
      `<h2>${esc(v.title)}</h2>${kindOf === 'members' ? memberFacts(v.profile) : roomFacts(v.profile)}` +
      `<div class="cards">${card('直近30日の会話', `${v.cost30d.turns} 件`)}` +
      `${card('直近30日の費用', usd(v.cost30d.usd))}${card('確認待ち', `${v.pending.length} 件`)}</div>` +
      `<h3>確認待ち</h3>${table(PENDING_HEADS, rowsOr(pendingRows(v.pending), 8, '確認待ちはありません。'))}` +
      `<h3>最近の会話</h3>${table(AUDIT_HEADS, rowsOr(auditRows(v.turns), 10, '記録はありません。'))}` +
      `<h3>定期通知</h3>${table(['種類', '時刻の指定', '状態'], rowsOr(sched, 3, '定期通知はありません。'))}`;
    linkRows(el);
  }

  /** Each cell carries its column's heading (data-label): on a phone a row reads as a card of labelled lines. */
  function labelTables() {
    document.querySelectorAll('main table:not(.u-legend)').forEach((t) => {
      const heads = [...t.querySelectorAll(':scope > thead th')].map((th) => th.textContent.trim());
      t.querySelectorAll(':scope > tbody > tr').forEach((row) =>
        [...row.children].forEach((td, i) => {
          if (heads[i] && !td.hasAttribute('colspan') && td.dataset.label !== heads[i]) td.dataset.label = heads[i];
        }),
      );
    });
  }
  new MutationObserver((changes) => {
    if (changes.some((c) => !c.target.closest('.uplot'))) labelTables();
  }).observe(document.querySelector('main'), { childList: true, subtree: true });

  function showError(err) {
    if (err && err.message === 'login') return;
    const s = document.querySelector('section.active');
    if (!s) return;
    s.querySelectorAll('.error').forEach((x) => x.remove());
    s.insertAdjacentHTML('afterbegin', `<p class="error" role="alert">${esc(err && err.message)}</p>`);
  }
  function route() {
    const [page, ...rest] = (location.hash.slice(1) || 'overview').split('/');
    const arg = rest.length ? decodeURIComponent(rest.join('/')) : '';
    document.querySelectorAll('main section').forEach((s) => {
      s.classList.toggle('active', s.id === page);
      s.querySelectorAll('.error').forEach((x) => x.remove());
    });
    document
      .querySelectorAll('#nav a')
      .forEach((a) => a.classList.toggle('active', a.getAttribute('href') === `#${page}`));
    const pages = {
      overview,
      audit,
      turn: () => turn(arg),
      pending,
      schedules,
      constitution,
      alerts,
      failed,
      members,
      rooms,
      policies,
      mcp,
      member: () => scope('members', arg),
      room: () => scope('rooms', arg),
    };
    if (pages[page]) pages[page]().catch(showError);
  }
  api('labels')
    .then((labels) => {
      L = labels;
      document.querySelectorAll('.tz').forEach((x) => (x.textContent = L.timezone));
      fillFilterOptions();
    })
    .catch(showError)
    .finally(() => {
      window.addEventListener('hashchange', route);
      route();
    });
})();
