// Hisho 管理画面: plain browser JavaScript over /admin/api (session cookie). Charts: uPlot.
(function () {
  'use strict';
  const $ = (id) => document.getElementById(id);
  const esc = (v) => String(v === null || v === undefined ? '' : v).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' }[c]));
  const when = (iso) => (iso ? new Date(iso).toLocaleString('ja-JP', { timeZone: 'Asia/Tokyo' }) : '—');
  const pill = (v) => (v ? `<span class="pill ${esc(v)}">${esc(v)}</span>` : '');
  const pct = (x) => (x === null || x === undefined ? '—' : `${(x * 100).toFixed(1)}%`);
  async function api(path) {
    const res = await fetch(`/admin/api/${path}`, { credentials: 'same-origin' });
    if (res.status === 401) { location.href = `/admin/login?next=${encodeURIComponent('/admin' + location.hash)}`; throw new Error('login'); }
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
    charts[id] = new uPlot({ width: Math.max(480, el.clientWidth - 4), height: 220, series: [{}].concat(series), axes: opts && opts.axes, scales: opts && opts.scales }, data, el);
    el.dataset.points = String(data[0].length);
    el.dataset.total = String(data[1].reduce((a, b) => a + (b || 0), 0));
  }
  async function overview() {
    const o = await api(`overview?range=${range}`);
    const t = o.today;
    const cards = [
      ['今日のターン', t.turns], ['平均処理時間', t.avg_ms === null ? '—' : `${Math.round(t.avg_ms)} ms`], ['確信度の平均', t.avg_confidence === null ? '—' : t.avg_confidence.toFixed(2)],
      ['確認率（今日）', t.turns ? pct(t.confirms / t.turns) : '—'], ['ブロック率（今日）', t.turns ? pct(t.blocks / t.turns) : '—'],
      ['コスト（今日）', `$${(t.cost_today || 0).toFixed(2)}`], ['コスト（今月）', `$${(t.cost_month || 0).toFixed(2)}`], ['キュー', t.queue],
    ];
    $('today').innerHTML = cards.map(([k, v]) => `<div class="card"><div class="k">${esc(k)}</div><div class="v">${esc(v)}</div></div>`).join('');
    const b = o.buckets;
    const xs = b.map((x) => Date.parse(x.t) / 1000);
    chart('c-turns', [{ label: 'ターン', stroke: '#2c7be5', fill: 'rgba(44,123,229,.15)' }], [xs, b.map((x) => x.turns)]);
    chart('c-latency', [{ label: 'p50', stroke: '#2c7be5' }, { label: 'p95', stroke: '#e55353' }], [xs, b.map((x) => x.p50Ms), b.map((x) => x.p95Ms)]);
    chart('c-rates', [{ label: '確認率 %', stroke: '#f0ad4e' }, { label: 'ブロック率 %', stroke: '#e55353' }],
      [xs, b.map((x) => (x.confirmRate === null ? null : x.confirmRate * 100)), b.map((x) => (x.blockRate === null ? null : x.blockRate * 100))]);
    chart('c-cost', [{ label: 'USD', stroke: '#6f42c1', scale: 'usd' }, { label: 'キャッシュ読込 %', stroke: '#20a779', scale: 'pct' }],
      [xs, b.map((x) => x.costUsd), b.map((x) => (x.cacheReadShare === null ? null : x.cacheReadShare * 100))],
      { scales: { usd: {}, pct: { range: [0, 100] } }, axes: [{}, { scale: 'usd' }, { scale: 'pct', side: 1, grid: { show: false } }] });
    chart('c-queue', [{ label: '件数', stroke: '#555' }], [xs, b.map((x) => x.queueDepth)]);
  }
  document.querySelectorAll('.range button').forEach((btn) => btn.addEventListener('click', () => {
    range = btn.dataset.range;
    document.querySelectorAll('.range button').forEach((x) => x.classList.toggle('on', x === btn));
    overview();
  }));

  // ── Audit log ──
  async function audit() {
    const params = new URLSearchParams();
    new FormData($('audit-form')).forEach((v, k) => { if (v) params.set(k, String(v)); });
    const { turns } = await api(`audit?${params}`);
    $('audit-rows').innerHTML = turns.map((r) => `<tr data-id="${esc(r.id)}" style="cursor:pointer">
      <td>${esc(when(r.createdAt))}</td><td>${esc(r.kind)}</td><td>${esc(r.member || r.accountId)}</td><td>${esc(r.platform)}:${esc(r.roomId)}</td>
      <td>${pill(r.decision)}</td><td>${esc(r.reasonCode)}</td><td>${pill(r.guardianAction)}</td><td>${pill(r.authResult)}</td>
      <td class="num">${esc(r.totalMs)}</td><td class="num">${Number(r.costUsd).toFixed(4)}</td><td>${esc(r.input)}</td><td>${pill(r.critique)}</td></tr>`).join('')
      || '<tr><td colspan="12">該当する記録はありません。条件を変えて検索してください。</td></tr>';
    document.querySelectorAll('#audit-rows tr[data-id]').forEach((tr) => tr.addEventListener('click', () => { location.hash = `turn/${tr.dataset.id}`; }));
  }
  $('audit-form').addEventListener('submit', (e) => { e.preventDefault(); audit().catch(showError); });

  // ── Turn inspector ──
  const block = (title, html) => `<div class="step"><h3>${esc(title)}</h3>${html}</div>`;
  const json = (v) => `<pre>${esc(JSON.stringify(v, null, 2))}</pre>`;
  async function turn(id) {
    $('turn-form').elements.namedItem('turnId').value = id || '';
    if (!id) { $('turn-steps').innerHTML = '<p class="muted">監査ログの行を選ぶか、ターンIDを入力してください。</p>'; return; }
    const { turn: t } = await api(`turns/${encodeURIComponent(id)}`);
    const ctx = t.contextSummary || {};
    const proposals = t.proposals || [];
    const rules = proposals.map((p, i) => `<p><b>${i + 1}. ${esc(p.tool)}</b> ${pill(p.guardian && p.guardian.action)} ${esc(p.guardian && p.guardian.reasonCode)}</p>
      <table><thead><tr><th>ルール</th><th>優先度</th><th>結果</th><th>理由コード</th><th>適用</th></tr></thead><tbody>${((p.guardian && p.guardian.trace) || []).map((r) =>
        `<tr><td>${esc(r.rule)}</td><td>${esc(r.priority)}</td><td>${pill(r.outcome)}</td><td>${esc(r.reasonCode)}</td><td>${r.enforced ? '適用' : 'シャドー'}</td></tr>`).join('')}</tbody></table>`).join('');
    const calls = (t.calls || []).map((c) => `<tr><td>${esc(c.purpose)}</td><td>${esc(c.model)}</td><td class="num">${esc(c.durationMs)}</td><td class="num">${esc(c.inputTokens)}</td>
      <td class="num">${esc(c.cacheReadTokens)}</td><td class="num">${esc(c.cacheWriteTokens)}</td><td class="num">${esc(c.outputTokens)}</td><td class="num">${Number(c.costUsd).toFixed(5)}</td></tr>`).join('');
    $('turn-steps').innerHTML = [
      block('1. 入力', `<p class="muted">${esc(when(t.createdAt))}・${esc(t.member || t.accountId)}・${esc(t.platform)}:${esc(t.roomId)}・${esc(t.kind)}</p><pre>${esc(t.inputRedacted)}</pre>`),
      block('2. 使った文脈', `<p>${(ctx.sections || []).map((s) => `<span class="pill">${esc(s)}</span>`).join(' ') || '—'}</p>${ctx.facts ? json(ctx.facts) : ''}<p class="muted">履歴 ${esc(ctx.historyTurns ?? '—')} 件・要約 ${ctx.summary ? 'あり' : 'なし'}・方針 ${esc(ctx.policies ?? '—')} 件${ctx.degraded && ctx.degraded.length ? `・取得失敗: ${esc(ctx.degraded.join(', '))}` : ''}</p>`),
      block('3. モデルの思考と確信度', `<p class="muted">モデル ${esc(t.model || '—')}・出力 ${esc(t.outputType || '—')}</p>${json(t.reasoning)}${json(t.confidence)}`),
      block('4. Guardian（ルールごとの結果）', `<p>${pill(t.guardianAction)} ${esc(t.guardianReason)}</p>${rules || '<p class="muted">ツールの提案はありません（返答の出力チェックのみ）。</p>'}`),
      block('5. 権限ゲート（AuthorizationGate）', `<p>${pill(t.authResult)} ${esc(t.authReason)}</p>${proposals.map((p) => (p.auth ? `<p>${esc(p.tool)}: ${pill(p.auth.result)} ${esc(p.auth.reasonCode)}</p>` : '')).join('')}`),
      block('6. 実行', `${json(t.execution)}${(t.pending || []).length ? json(t.pending) : ''}`),
      block('7. 返答', `<p>${pill(t.decision)} ${esc(t.reasonCode)}・決定者 ${esc(t.finalDecider)}</p><pre>${esc(t.finalReply)}</pre>`),
      block('所要時間とトークン', `<p>合計 ${esc(t.totalMs)} ms（LLM ${esc(t.llmMs)} ms・ツール ${esc(t.toolsMs)} ms）・入力 ${esc(t.inputTokens)}・出力 ${esc(t.outputTokens)}・キャッシュ読込 ${esc(t.cacheReadTokens)}・$${Number(t.costUsd).toFixed(5)}</p>
        <table><thead><tr><th>目的</th><th>モデル</th><th>ms</th><th>入力</th><th>キャッシュ読込</th><th>キャッシュ書込</th><th>出力</th><th>USD</th></tr></thead><tbody>${calls}</tbody></table>`),
      block('自己批判（判断は変えません）', t.selfCritique ? json(t.selfCritique) : '<p class="muted">このターンは自己批判の対象ではありません。</p>'),
    ].join('');
  }
  $('turn-form').addEventListener('submit', (e) => { e.preventDefault(); location.hash = `turn/${$('turn-form').elements.namedItem('turnId').value.trim()}`; });

  // ── Pending, schedules, constitution audits, alerts ──
  async function pending() {
    const { pending: rows } = await api('pending');
    $('pending-rows').innerHTML = rows.map((p) => `<tr><td>${esc(when(p.createdAt))}</td><td>${esc(when(p.expiresAt))}</td><td>${esc(p.member)}</td><td>${esc(p.platform)}:${esc(p.roomId)}</td>
      <td>${esc(p.tool)}</td><td>${esc(p.question)}</td><td>${esc(p.confirmationsGiven)}/${p.confirmationType === 'double' ? 2 : 1}</td><td>${esc(p.reasonCode)}</td>
      <td>${p.turnId ? `<a href="#turn/${esc(p.turnId)}">開く</a>` : ''}</td></tr>`).join('') || '<tr><td colspan="9">確認待ちの操作はありません。</td></tr>';
  }
  const problems = { no_room: 'ルーム未指定', room_not_in_directory: 'ルームがディレクトリにない', platform_not_enabled: 'このプラットフォームは無効', room_notices_off: 'ルームで通知オフ', public_room: '公開ルーム（送信しない）' };
  async function schedules() {
    const s = await api('schedules');
    $('sched-note').textContent = s.running ? '' : 'このインスタンスでは通知スケジューラが動いていません（NOTICES_ENABLED）。';
    $('sched-rows').innerHTML = s.schedules.map((x) => `<tr><td>${esc(x.id)}</td><td>${esc(x.kind)}</td><td><code>${esc(x.cron)}</code></td><td>${esc(x.timezone)}</td><td>${esc(x.room)}</td>
      <td>${x.enabled ? '有効' : '無効'}</td><td>${x.lastRun ? `${esc(when(x.lastRun.period))} ${pill(x.lastRun.status)} ${esc(x.lastRun.recipients)}件${x.lastRun.skipped ? `・スキップ ${esc(x.lastRun.skipped)}` : ''}` : '—'}</td>
      <td>${esc(when(x.nextRun))}</td><td>${x.problem ? pill('BLOCK') + ' ' + esc(problems[x.problem] || x.problem) : pill('ok')}</td></tr>`).join('') || '<tr><td colspan="9">スケジュールはありません。</td></tr>';
  }
  const findings = { short_reasoning: '思考過程が短い', permission_claim: '権限の判断', asserts_execution: '実行の断定', violation_blocked: '違反をブロック', guardian_skipped: 'Guardian 未経由', auth_skipped: '権限チェック未経由' };
  async function constitution() {
    const c = await api('audits/constitution?days=7');
    $('const-checks').innerHTML = Object.entries(c.checks).map(([k, v]) => `<div class="card"><div class="k">${esc(findings[k] || k)}</div><div class="v">${esc(v)}</div></div>`).join('');
    $('const-rows').innerHTML = c.turns.map((t) => `<tr><td>${esc(when(t.createdAt))}</td><td><a href="#turn/${esc(t.id)}">${esc(t.id)}</a></td><td>${pill(t.decision)}</td><td>${esc(t.reasonCode)}</td>
      <td>${t.findings.map((f) => `<span class="pill">${esc(findings[f] || f)}</span>`).join(' ')}</td></tr>`).join('') || '<tr><td colspan="5">該当はありません。</td></tr>';
  }
  async function alerts() {
    const { alerts: rows } = await api('alerts');
    $('alert-rows').innerHTML = rows.map((a) => `<tr><td>${esc(when(a.createdAt))}</td><td>${esc(a.kind)}</td><td>${pill(a.severity)}</td><td>${esc(Object.entries(a.facts || {}).map(([k, v]) => `${k}=${v}`).join(', '))}</td>
      <td class="num">${esc(a.repeats)}</td></tr>`).join('') || '<tr><td colspan="5">アラートはありません。</td></tr>';
  }

  function showError(err) {
    if (err && err.message === 'login') return;
    const s = document.querySelector('section.active');
    if (s) s.insertAdjacentHTML('afterbegin', `<p class="error" role="alert">読み込めませんでした: ${esc(err && err.message)}。再読み込みしてください。</p>`);
  }
  function route() {
    const [page, arg] = (location.hash.slice(1) || 'overview').split('/');
    document.querySelectorAll('main section').forEach((s) => s.classList.toggle('active', s.id === page));
    document.querySelectorAll('#nav a').forEach((a) => a.classList.toggle('active', a.getAttribute('href') === `#${page}`));
    const run = { overview, audit, turn: () => turn(arg && decodeURIComponent(arg)), pending, schedules, constitution, alerts }[page];
    if (run) run().catch(showError);
  }
  window.addEventListener('hashchange', route);
  route();
})();
