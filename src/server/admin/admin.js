// Hisho 管理画面: plain browser JavaScript over /admin/api (session cookie). Charts: uPlot.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const ESC = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
  const esc = (v) => String(v === null || v === undefined ? '' : v).replace(/[&<>"]/g, (c) => ESC[c]);
  const when = (iso) => (iso ? new Date(iso).toLocaleString('ja-JP', { timeZone: 'Asia/Tokyo' }) : '—');
  const pill = (v) => (v ? `<span class="pill ${esc(v)}">${esc(v)}</span>` : '');
  const pct = (x) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);
  const num = (v, digits) => `<span class="num">${digits === undefined ? esc(v) : Number(v).toFixed(digits)}</span>`;
  /** One table row; cells are HTML already escaped by the caller. */
  const tr = (cells, attrs) => `<tr${attrs || ''}>${cells.map((c) => `<td>${c}</td>`).join('')}</tr>`;
  const rowsOr = (html, cols, empty) => html || `<tr><td colspan="${cols}">${esc(empty)}</td></tr>`;
  const table = (heads, body) =>
    `<table><thead><tr>${heads.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`;
  const json = (v) => `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;

  async function api(path) {
    const res = await fetch(`/admin/api/${path}`, { credentials: 'same-origin' });
    if (res.status === 401) {
      location.href = `/admin/login?next=${encodeURIComponent('/admin' + location.hash)}`;
      throw new Error('login');
    }
    const body = await res.json();
    if (!res.ok) throw new Error(body.error || res.statusText);
    return body;
  }

  // ── Overview ──
  const charts = {};
  let range = '24h';
  function chart(id, series, data, opts) {
    const el = $(id);
    if (charts[id]) charts[id].destroy();
    el.innerHTML = '';
    const o = opts || {};
    const width = Math.max(480, el.clientWidth - 4);
    const config = { width, height: 220, series: [{}].concat(series), axes: o.axes, scales: o.scales };
    charts[id] = new uPlot(config, data, el);
    el.dataset.points = String(data[0].length);
    el.dataset.total = String(data[1].reduce((a, b) => a + (b || 0), 0));
  }
  async function overview() {
    const o = await api(`overview?range=${range}`);
    const t = o.today;
    const cards = [
      ['今日のターン', t.turns],
      ['平均処理時間', t.avg_ms === null ? '—' : `${Math.round(t.avg_ms)} ms`],
      ['確信度の平均', t.avg_confidence === null ? '—' : t.avg_confidence.toFixed(2)],
      ['確認率（今日）', t.turns ? pct(t.confirms / t.turns) : '—'],
      ['ブロック率（今日）', t.turns ? pct(t.blocks / t.turns) : '—'],
      ['コスト（今日）', `$${(t.cost_today || 0).toFixed(2)}`],
      ['コスト（今月）', `$${(t.cost_month || 0).toFixed(2)}`],
      ['キュー', t.queue],
    ];
    $('today').innerHTML = cards
      .map(([k, v]) => `<div class="card"><div class="k">${esc(k)}</div><div class="v">${esc(v)}</div></div>`)
      .join('');
    const b = o.buckets;
    const xs = b.map((x) => Date.parse(x.t) / 1000);
    const share = (v) => (v === null ? null : v * 100);
    chart(
      'c-turns',
      [{ label: 'ターン', stroke: '#2c7be5', fill: 'rgba(44,123,229,.15)' }],
      [xs, b.map((x) => x.turns)],
    );
    chart(
      'c-latency',
      [
        { label: 'p50', stroke: '#2c7be5' },
        { label: 'p95', stroke: '#e55353' },
      ],
      [xs, b.map((x) => x.p50Ms), b.map((x) => x.p95Ms)],
    );
    chart(
      'c-rates',
      [
        { label: '確認率 %', stroke: '#f0ad4e' },
        { label: 'ブロック率 %', stroke: '#e55353' },
      ],
      [xs, b.map((x) => share(x.confirmRate)), b.map((x) => share(x.blockRate))],
    );
    chart(
      'c-cost',
      [
        { label: 'USD', stroke: '#6f42c1', scale: 'usd' },
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
    const rows = turns
      .map((r) =>
        tr(
          [
            esc(when(r.createdAt)),
            esc(r.kind),
            esc(r.member || r.accountId),
            `${esc(r.platform)}:${esc(r.roomId)}`,
            pill(r.decision),
            esc(r.reasonCode),
            pill(r.guardianAction),
            pill(r.authResult),
            num(r.totalMs),
            num(r.costUsd, 4),
            esc(r.input),
            pill(r.critique),
          ],
          ` data-id="${esc(r.id)}" style="cursor:pointer"`,
        ),
      )
      .join('');
    $('audit-rows').innerHTML = rowsOr(rows, 12, '該当する記録はありません。条件を変えて検索してください。');
    $('audit-rows').dataset.query = params.toString();
    document.querySelectorAll('#audit-rows tr[data-id]').forEach((row) =>
      row.addEventListener('click', () => {
        location.hash = `turn/${row.dataset.id}`;
      }),
    );
  }
  $('audit-form').addEventListener('submit', (e) => {
    e.preventDefault();
    audit().catch(showError);
  });

  // ── Turn inspector: input → context → reasoning → Guardian rules → Gate → execution → reply ──
  const block = (title, html) => `<div class="step"><h3>${esc(title)}</h3>${html}</div>`;
  function guardianRules(proposals) {
    return proposals
      .map((p, i) => {
        const g = p.guardian || {};
        const trace = (g.trace || [])
          .map((r) =>
            tr([esc(r.rule), esc(r.priority), pill(r.outcome), esc(r.reasonCode), r.enforced ? '適用' : 'シャドー']),
          )
          .join('');
        return (
          `<p><b>${i + 1}. ${esc(p.tool)}</b> ${pill(g.action)} ${esc(g.reasonCode)}</p>` +
          table(['ルール', '優先度', '結果', '理由コード', '適用'], trace)
        );
      })
      .join('');
  }
  function contextUsed(ctx) {
    const sections = (ctx.sections || []).map((s) => `<span class="pill">${esc(s)}</span>`).join(' ') || '—';
    const degraded = ctx.degraded && ctx.degraded.length ? `・取得失敗: ${esc(ctx.degraded.join(', '))}` : '';
    const facts = ctx.facts ? json(ctx.facts) : '';
    return (
      `<p>${sections}</p>${facts}<p class="muted">履歴 ${esc(ctx.historyTurns ?? '—')} 件・` +
      `要約 ${ctx.summary ? 'あり' : 'なし'}・方針 ${esc(ctx.policies ?? '—')} 件${degraded}</p>`
    );
  }
  function durations(t) {
    const calls = (t.calls || [])
      .map((c) =>
        tr([
          esc(c.purpose),
          esc(c.model),
          num(c.durationMs),
          num(c.inputTokens),
          num(c.cacheReadTokens),
          num(c.cacheWriteTokens),
          num(c.outputTokens),
          num(c.costUsd, 5),
        ]),
      )
      .join('');
    return (
      `<p>合計 ${esc(t.totalMs)} ms（LLM ${esc(t.llmMs)} ms・ツール ${esc(t.toolsMs)} ms）・入力 ${esc(t.inputTokens)}` +
      `・出力 ${esc(t.outputTokens)}・キャッシュ読込 ${esc(t.cacheReadTokens)}・$${Number(t.costUsd).toFixed(5)}</p>` +
      table(['目的', 'モデル', 'ms', '入力', 'キャッシュ読込', 'キャッシュ書込', '出力', 'USD'], calls)
    );
  }
  async function turn(id) {
    $('turn-form').elements.namedItem('turnId').value = id || '';
    if (!id) {
      $('turn-steps').innerHTML = '<p class="muted">監査ログの行を選ぶか、ターンIDを入力してください。</p>';
      return;
    }
    const { turn: t } = await api(`turns/${encodeURIComponent(id)}`);
    const proposals = t.proposals || [];
    const who = esc(t.member || t.accountId);
    const where = `${esc(when(t.createdAt))}・${who}・${esc(t.platform)}:${esc(t.roomId)}・${esc(t.kind)}`;
    const gate = proposals.map((p) =>
      p.auth ? `<p>${esc(p.tool)}: ${pill(p.auth.result)} ${esc(p.auth.reasonCode)}</p>` : '',
    );
    const noProposal = '<p class="muted">ツールの提案はありません（返答の出力チェックのみ）。</p>';
    $('turn-steps').innerHTML = [
      block('1. 入力', `<p class="muted">${where}</p><pre>${esc(t.inputRedacted)}</pre>`),
      block('2. 使った文脈', contextUsed(t.contextSummary || {})),
      block(
        '3. モデルの思考と確信度',
        `<p class="muted">モデル ${esc(t.model || '—')}・出力 ${esc(t.outputType || '—')}</p>` +
          json(t.reasoning) +
          json(t.confidence),
      ),
      block(
        '4. Guardian（ルールごとの結果）',
        `<p>${pill(t.guardianAction)} ${esc(t.guardianReason)}</p>${guardianRules(proposals) || noProposal}`,
      ),
      block('5. 権限ゲート（AuthorizationGate）', `<p>${pill(t.authResult)} ${esc(t.authReason)}</p>${gate.join('')}`),
      block('6. 実行', `${json(t.execution)}${(t.pending || []).length ? json(t.pending) : ''}`),
      block(
        '7. 返答',
        `<p>${pill(t.decision)} ${esc(t.reasonCode)}・決定者 ${esc(t.finalDecider)}</p><pre>${esc(t.finalReply)}</pre>`,
      ),
      block('所要時間とトークン', durations(t)),
      block(
        '自己批判（判断は変えません）',
        t.selfCritique ? json(t.selfCritique) : '<p class="muted">このターンは自己批判の対象ではありません。</p>',
      ),
    ].join('');
  }
  $('turn-form').addEventListener('submit', (e) => {
    e.preventDefault();
    location.hash = `turn/${$('turn-form').elements.namedItem('turnId').value.trim()}`;
  });

  // ── Pending confirmations, schedules, constitution audits, alerts ──
  async function pending() {
    const { pending: rows } = await api('pending');
    const html = rows
      .map((p) =>
        tr([
          esc(when(p.createdAt)),
          esc(when(p.expiresAt)),
          esc(p.member),
          `${esc(p.platform)}:${esc(p.roomId)}`,
          esc(p.tool),
          esc(p.question),
          `${esc(p.confirmationsGiven)}/${p.confirmationType === 'double' ? 2 : 1}`,
          esc(p.reasonCode),
          p.turnId ? `<a href="#turn/${esc(p.turnId)}">開く</a>` : '',
        ]),
      )
      .join('');
    $('pending-rows').innerHTML = rowsOr(html, 9, '確認待ちの操作はありません。');
  }
  const PROBLEMS = {
    no_room: 'ルーム未指定',
    room_not_in_directory: 'ルームがディレクトリにない',
    platform_not_enabled: 'このプラットフォームは無効',
    room_notices_off: 'ルームで通知オフ',
    public_room: '公開ルーム（送信しない）',
  };
  function lastRun(r) {
    if (!r) return '—';
    const skipped = r.skipped ? `・スキップ ${esc(r.skipped)}` : '';
    return `${esc(when(r.period))} ${pill(r.status)} ${esc(r.recipients)}件${skipped}`;
  }
  async function schedules() {
    const s = await api('schedules');
    $('sched-note').textContent = s.running
      ? ''
      : 'このインスタンスでは通知スケジューラが動いていません（NOTICES_ENABLED）。';
    const html = s.schedules
      .map((x) =>
        tr([
          esc(x.id),
          esc(x.kind),
          `<code>${esc(x.cron)}</code>`,
          esc(x.timezone),
          esc(x.room),
          x.enabled ? '有効' : '無効',
          lastRun(x.lastRun),
          esc(when(x.nextRun)),
          x.problem ? `${pill('BLOCK')} ${esc(PROBLEMS[x.problem] || x.problem)}` : pill('ok'),
        ]),
      )
      .join('');
    $('sched-rows').innerHTML = rowsOr(html, 9, 'スケジュールはありません。');
  }
  const FINDINGS = {
    short_reasoning: '思考過程が短い',
    permission_claim: '権限の判断',
    asserts_execution: '実行の断定',
    violation_blocked: '違反をブロック',
    guardian_skipped: 'Guardian 未経由',
    auth_skipped: '権限チェック未経由',
  };
  async function constitution() {
    const c = await api('audits/constitution?days=7');
    $('const-checks').innerHTML = Object.entries(c.checks)
      .map(
        ([k, v]) =>
          `<div class="card"><div class="k">${esc(FINDINGS[k] || k)}</div>` + `<div class="v">${esc(v)}</div></div>`,
      )
      .join('');
    const html = c.turns
      .map((t) =>
        tr([
          esc(when(t.createdAt)),
          `<a href="#turn/${esc(t.id)}">${esc(t.id)}</a>`,
          pill(t.decision),
          esc(t.reasonCode),
          t.findings.map((f) => `<span class="pill">${esc(FINDINGS[f] || f)}</span>`).join(' '),
        ]),
      )
      .join('');
    $('const-rows').innerHTML = rowsOr(html, 5, '該当はありません。');
  }
  async function alerts() {
    const { alerts: rows } = await api('alerts');
    const facts = (a) =>
      Object.entries(a.facts || {})
        .map(([k, v]) => `${k}=${v}`)
        .join(', ');
    const html = rows
      .map((a) => tr([esc(when(a.createdAt)), esc(a.kind), pill(a.severity), esc(facts(a)), num(a.repeats)]))
      .join('');
    $('alert-rows').innerHTML = rowsOr(html, 5, 'アラートはありません。');
  }

  async function failed() {
    const { failed: rows } = await api('failed');
    const html = rows
      .map((f) =>
        tr([
          esc(when(f.failedAt)),
          `<code>${esc(f.errorId || '—')}</code>`,
          esc(f.what),
          esc(f.cause),
          esc(f.room || '—'),
          num(f.attempts),
          esc(when(f.createdAt)),
          f.told === '未送信' ? `<span class="pill ERROR">${esc(f.told)}</span>` : esc(f.told),
        ]),
      )
      .join('');
    $('failed-rows').innerHTML = rowsOr(html, 8, '失敗した処理はありません。');
  }

  function showError(err) {
    if (err && err.message === 'login') return;
    const s = document.querySelector('section.active');
    const text = `読み込めませんでした: ${esc(err && err.message)}。再読み込みしてください。`;
    if (s) s.insertAdjacentHTML('afterbegin', `<p class="error" role="alert">${text}</p>`);
  }
  function route() {
    const [page, arg] = (location.hash.slice(1) || 'overview').split('/');
    document.querySelectorAll('main section').forEach((s) => s.classList.toggle('active', s.id === page));
    document
      .querySelectorAll('#nav a')
      .forEach((a) => a.classList.toggle('active', a.getAttribute('href') === `#${page}`));
    const inspect = () => turn(arg && decodeURIComponent(arg));
    const pages = { overview, audit, turn: inspect, pending, schedules, constitution, alerts, failed };
    if (pages[page]) pages[page]().catch(showError);
  }
  window.addEventListener('hashchange', route);
  route();
})();
