/**
 * The server-rendered status page: no scripts to build, inline CSS, and a
 * `<meta http-equiv="refresh">` so it reloads itself. It opens with the readiness banner (what
 * /ready answers, with its reasons), version and uptime. Every value goes through escapeHtml:
 * client names, campaign names, statuses and last errors come from outside (API callers, SMSCs,
 * modems, webhook endpoints).
 */
import type { CountsByName, OutcomeBreakdown } from './campaign-outcomes.js';
import type { CampaignFacts, ClientCreditFacts, LinkFacts, RouteStatus, SmppSessionFacts, StatusFacts, TransportFacts } from './status-facts.js';

export const STATUS_REFRESH_SECONDS = 5;
/** Recent errors on the page (newest first); /status.json has every one kept. */
export const RECENT_ERRORS_SHOWN = 10;

export interface StatusPageOptions {
  /** The per-process token the replay form carries (checked on POST). */
  csrfToken: string;
  /** Shown once after a replay (from the redirect's query). */
  notice?: string;
  refreshSeconds?: number;
}

const HTML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(value: unknown): string {
  return String(value ?? '').replace(/[&<>"']/g, (c) => HTML_ESCAPES[c] ?? c);
}

function ago(iso: string | null, nowMs: number): string {
  if (iso === null) return '';
  const seconds = Math.max(0, Math.round((nowMs - Date.parse(iso)) / 1_000));
  const text = seconds < 120 ? `${seconds} s` : seconds < 7_200 ? `${Math.round(seconds / 60)} min` : `${Math.round(seconds / 3_600)} h`;
  return `<time datetime="${escapeHtml(iso)}" title="${escapeHtml(iso)}">${text} ago</time>`;
}

function stateBadge(state: string): string {
  return `<span class="state state-${escapeHtml(state)}">${escapeHtml(state)}</span>`;
}

function percent(part: number, whole: number): string {
  return whole <= 0 ? '0' : ((100 * part) / whole).toFixed(1);
}

/** Operators count modem sends per minute (a modem sends a few a minute) and carrier binds per second. */
export function rateText(t: Pick<TransportFacts, 'type' | 'ratePerSecond' | 'maxPerSecond' | 'ratePerMinute' | 'maxPerMinute'>): string {
  return t.type === 'modem' ? `${t.ratePerMinute} / ${t.maxPerMinute} per min` : `${t.ratePerSecond} / ${t.maxPerSecond} per s`;
}

function duration(seconds: number): string {
  const d = Math.floor(seconds / 86_400);
  const h = Math.floor((seconds % 86_400) / 3_600);
  const m = Math.floor((seconds % 3_600) / 60);
  return d > 0 ? `${d} d ${h} h` : h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${seconds % 60} s` : `${seconds} s`;
}

function readinessBanner(facts: StatusFacts): string {
  const r = facts.readiness;
  if (r === null) return '<div id="readiness" class="banner unknown"><strong>Readiness not known</strong>: smsgate serve is not answering.</div>';
  if (r.ready) return '<div id="readiness" class="banner ready"><strong>Ready</strong>: the database takes writes and every route has a transport up.</div>';
  const reasons = r.reasons.map((reason) => `<li>${escapeHtml(reason)}</li>`).join('');
  return `<div id="readiness" class="banner not-ready"><strong>Not ready</strong> (GET /ready answers 503):<ul>${reasons}</ul></div>`;
}

function transportRow(t: TransportFacts, nowMs: number): string {
  return `<tr data-transport-summary="${escapeHtml(t.name)}"><td>${escapeHtml(t.name)}</td><td>${escapeHtml(t.type)}</td>
<td>${stateBadge(t.state)}</td><td>${ago(t.since, nowMs)}</td><td class="num rate">${escapeHtml(rateText(t))}</td>
<td class="num submitted">${t.parts.submitted}</td><td class="num accepted">${t.parts.accepted}</td><td class="num throttled">${t.parts.throttled}</td>
<td class="num rejected">${t.parts.rejected}</td><td class="num failed">${t.parts.failed}</td><td class="err">${escapeHtml(t.lastError ?? '')}</td></tr>`;
}

function linkRow(transport: TransportFacts, link: LinkFacts, nowMs: number): string {
  return `<tr data-transport="${escapeHtml(transport.name)}" data-bind="${escapeHtml(link.name)}">
<td>${escapeHtml(transport.name)}</td><td>${escapeHtml(transport.type)}</td><td>${escapeHtml(link.name)}</td>
<td>${stateBadge(link.state)}</td><td>${ago(link.since, nowMs)}</td>
<td class="num">${link.windowUsed} / ${link.windowSize}</td>
<td class="err">${escapeHtml(link.lastError ?? '')}</td></tr>`;
}

function transportsSection(facts: StatusFacts, nowMs: number): string {
  if (facts.transports === null) return '<p>Not known: smsgate serve is not answering.</p>';
  const summary = facts.transports.map((t) => transportRow(t, nowMs)).join('\n');
  const links = facts.transports.flatMap((t) => t.links.map((link) => linkRow(t, link, nowMs))).join('\n');
  return `<table id="transports"><thead><tr><th>transport</th><th>type</th><th>state</th><th>since</th><th>rate (now / max)</th>
<th>submitted</th><th>accepted</th><th>throttled</th><th>rejected</th><th>failed</th><th>last error</th></tr></thead>
<tbody>${summary}</tbody></table>
<p class="quiet">Parts handed to each transport since start. Rates: parts over the last 10 s (per second) or the last minute (per minute, modems).</p>
<h3>Binds and devices</h3>
<table id="binds"><thead><tr><th>transport</th><th>type</th><th>bind</th><th>state</th><th>since</th><th>window in use</th><th>last error</th></tr></thead>
<tbody>${links}</tbody></table>`;
}

function routeRow(r: RouteStatus): string {
  const transports = r.transports
    .map((t) => `${escapeHtml(t.name)}${t.weight === undefined ? '' : ` (${t.weight})`} ${t.up ? 'up' : 'down'}`)
    .join(', ');
  const window = r.window === undefined ? '' : r.window.open ? 'open' : 'closed';
  return `<tr data-route="${escapeHtml(r.route)}"><td>${r.route === '' ? '(every number)' : escapeHtml(r.route)}</td><td>${escapeHtml(r.strategy)}</td>
<td>${transports}</td><td class="current">${r.current === null ? '<span class="quiet">none up: parts wait</span>' : escapeHtml(r.current)}</td><td>${window}</td></tr>`;
}

function routesSection(facts: StatusFacts): string {
  const routes = facts.routes ?? null;
  if (routes === null) return '<p>Not known: smsgate serve is not answering.</p>';
  return `<table id="routes"><thead><tr><th>prefix</th><th>strategy</th><th>transports</th><th>parts go to now</th><th>window</th></tr></thead>
<tbody>${routes.map(routeRow).join('\n')}</tbody></table>`;
}

function configLine(facts: StatusFacts): string {
  if ((facts.configHash ?? null) === null) return '';
  return ` Config <code id="config-hash" title="sha-256 of the running config (smsgate config reload changes it)">${escapeHtml(facts.configHash)}</code>.`;
}

function modemsSection(facts: StatusFacts): string {
  const modems = (facts.transports ?? []).flatMap((t) => t.links.filter((l) => l.modem !== undefined).map((l) => ({ transport: t.name, link: l })));
  if (modems.length === 0) return '<p class="quiet">No modems configured.</p>';
  const rows = modems
    .map(({ transport, link }) => {
      const m = link.modem!;
      return `<tr><td>${escapeHtml(transport)}</td><td>${escapeHtml(link.name)}</td><td>${escapeHtml(m.operator ?? '')}</td>
<td class="num">${m.signalDbm === null ? '' : `${escapeHtml(m.signalDbm)} dBm`}</td><td>${escapeHtml(m.registration)}</td><td class="err">${escapeHtml(m.lastCmsError ?? '')}</td></tr>`;
    })
    .join('\n');
  return `<table id="modems"><thead><tr><th>transport</th><th>device</th><th>operator</th><th>signal</th><th>registration</th><th>last CMS error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function queuesSection(facts: StatusFacts): string {
  const names = new Set([...(facts.transports ?? []).map((t) => t.name), ...facts.queues.map((q) => q.transport)]);
  const rows = [...names]
    .map((name) => {
      const q = facts.queues.find((row) => row.transport === name);
      return `<tr><td>${escapeHtml(name)}</td><td class="num">${q?.queued ?? 0}</td><td class="num">${q?.submitting ?? 0}</td></tr>`;
    })
    .join('\n');
  return `<table id="queues"><thead><tr><th>transport</th><th>parts waiting in the store</th><th>parts claimed by the engine (queued in memory or awaiting the response)</th></tr></thead><tbody>${rows}</tbody></table>`;
}

function countsList(counts: CountsByName, kind: string): string {
  if (counts.length === 0) return '';
  return `<ul class="counts ${kind}">${counts.map((c) => `<li><span class="code">${escapeHtml(c.name)}</span> ${c.recipients}</li>`).join('')}</ul>`;
}

function outcomesCell(o: OutcomeBreakdown): string {
  return `<td class="outcomes"><div><span class="delivered-figure">${o.delivered}</span> delivered</div>
<div><span class="undelivered-figure">${o.undelivered.total}</span> undelivered${countsList(o.undelivered.byStatus, 'by-status')}</div>
<div><span class="rejected-figure">${o.rejected.total}</span> rejected${countsList(o.rejected.byCode, 'by-code')}</div>
<div><span class="pending-figure">${o.pending}</span> pending</div></td>`;
}

function campaignRow(c: CampaignFacts): string {
  const whole = Math.max(c.total, 1);
  const sent = `${c.sent} / ${c.total} sent`;
  const o = c.outcomes;
  const failed = o.undelivered.total + o.rejected.total;
  return `<tr class="campaign${c.finished ? ' finished' : ''}" data-campaign="${escapeHtml(c.id)}">
<td><div>${escapeHtml(c.name || c.id)}</div><div class="quiet">${escapeHtml(c.id)} · ${escapeHtml(c.client)} · ${escapeHtml(c.state)}${c.finished ? ' · finished' : ''}</div></td>
<td><div class="bar" role="img" aria-label="${escapeHtml(`${o.delivered} delivered, ${o.undelivered.total} undelivered, ${o.rejected.total} rejected, ${o.pending} pending of ${c.total}`)}">
<span class="delivered" style="width:${percent(o.delivered, whole)}%"></span><span class="undelivered" style="width:${percent(failed, whole)}%"></span></div>
<div class="bar thin"><span class="sent" style="width:${percent(c.sent, whole)}%"></span></div></td>
<td class="num sent-figure">${sent}</td>${outcomesCell(o)}</tr>`;
}

function campaignsSection(facts: StatusFacts): string {
  if (facts.campaigns.length === 0) return '<p class="quiet">No campaigns yet.</p>';
  return `<table id="campaigns"><thead><tr><th>campaign</th><th>progress</th><th>sent</th><th>outcome</th></tr></thead>
<tbody>${facts.campaigns.map(campaignRow).join('\n')}</tbody></table>`;
}

function webhooksSection(facts: StatusFacts, csrfToken: string, nowMs: number): string {
  const clients = facts.webhooks.clients;
  if (clients.length === 0) return '<p class="quiet">No client has a webhook.</p>';
  const rows = clients
    .map((c) => {
      const replay =
        c.dead === 0
          ? ''
          : `<form method="post" action="/status/replay"><input type="hidden" name="csrf" value="${escapeHtml(csrfToken)}"><input type="hidden" name="client" value="${escapeHtml(c.client)}"><button type="submit">Replay ${c.dead} dead letter${c.dead === 1 ? '' : 's'}</button></form>`;
      const breaker = c.breaker === null ? '<span class="quiet">not tried yet</span>' : `<span class="state state-breaker-${escapeHtml(c.breaker)}">breaker ${escapeHtml(c.breaker)}</span>`;
      const lastError = c.lastError === null ? '' : `${escapeHtml(c.lastError)} <span class="quiet">${ago(c.lastErrorAt, nowMs)}</span>`;
      return `<tr data-client="${escapeHtml(c.client)}"><td>${escapeHtml(c.client)}</td><td class="num">${c.pending}</td><td class="num">${c.dead}</td><td>${replay}</td><td class="breaker">${breaker}</td><td class="err last-error">${lastError}</td></tr>`;
    })
    .join('\n');
  return `<table id="webhooks"><thead><tr><th>client</th><th>pending</th><th>dead letters</th><th></th><th>breaker</th><th>last error</th></tr></thead><tbody>${rows}</tbody></table>`;
}

/** A client's send rate as the page and `smsgate status` show it. */
export function clientRateText(c: Pick<ClientCreditFacts, 'partsPerSecond'>): string {
  return c.partsPerSecond === null ? 'no cap' : `${c.partsPerSecond} parts/s`;
}

function creditRow(c: ClientCreditFacts, lowThreshold: number | null): string {
  const low = c.low ? ` <span class="state state-low low-credits" title="${escapeHtml(`available below credits.lowThreshold (${lowThreshold ?? ''})`)}">low</span>` : '';
  const figures = c.unlimited
    ? '<td class="num balance" colspan="3">unlimited</td>'
    : `<td class="num balance">${c.balance}</td><td class="num reserved">${c.reserved}</td><td class="num available">${c.available}</td>`;
  return `<tr data-credits-client="${escapeHtml(c.client)}"${c.low ? ' class="low"' : ''}><td>${escapeHtml(c.client)}${low}</td>${figures}<td class="num send-rate">${escapeHtml(clientRateText(c))}</td></tr>`;
}

function creditsSection(facts: StatusFacts): string {
  const { clients, lowThreshold } = facts.credits;
  if (clients.length === 0) return '<p class="quiet">No clients yet.</p>';
  const note = lowThreshold === null ? 'credits.lowThreshold is not set: no client is marked low.' : `Marked low: available below credits.lowThreshold (${lowThreshold}).`;
  return `<table id="credits"><thead><tr><th>client</th><th>balance</th><th>reserved</th><th>available</th><th>send rate</th></tr></thead>
<tbody>${clients.map((c) => creditRow(c, lowThreshold)).join('\n')}</tbody></table>
<p class="quiet">Credits: available = balance - reserved (reserved: held for accepted campaigns' parts not yet sent). ${escapeHtml(note)}</p>`;
}

/** A session's window use as the page and `smsgate status` show it; another node's is known there only. */
export function smppWindowText(s: Pick<SmppSessionFacts, 'windowInUse' | 'windowSize' | 'nodeId'>): string {
  return s.windowInUse === null ? `? / ${s.windowSize} (on ${s.nodeId})` : `${s.windowInUse} / ${s.windowSize}`;
}

/** A session's submit rate as the page and `smsgate status` show it. */
export function smppRateText(s: Pick<SmppSessionFacts, 'submitsPerSecond'>): string {
  return s.submitsPerSecond === null ? '' : `${s.submitsPerSecond} submit_sm/s`;
}

function smppSessionRow(s: SmppSessionFacts, nowMs: number): string {
  return `<tr data-smpp-session="${escapeHtml(s.sessionId)}"><td class="account">${escapeHtml(s.systemId)}</td><td class="bind-type">${escapeHtml(s.bindType)}</td>
<td class="address">${escapeHtml(s.address)}</td><td class="node">${escapeHtml(s.nodeId)}</td><td>${ago(s.boundAt, nowMs)}</td>
<td class="num window">${escapeHtml(smppWindowText(s))}</td><td class="num rate">${escapeHtml(smppRateText(s))}</td></tr>`;
}

function smppServerSection(facts: StatusFacts, nowMs: number): string {
  const server = facts.smppServer ?? null;
  if (server === null) {
    return facts.source === 'database' ? '<p>Not known: smsgate serve is not answering.</p>' : '<p class="quiet">Off: the config has no smppServer section.</p>';
  }
  const sessions =
    server.sessions.length === 0
      ? '<p class="quiet" id="smpp-sessions-none">No customer is bound.</p>'
      : `<table id="smpp-sessions"><thead><tr><th>account (system_id)</th><th>bind</th><th>address</th><th>node</th><th>bound</th><th>window in use</th><th>submit rate (last 10 s)</th></tr></thead>
<tbody>${server.sessions.map((s) => smppSessionRow(s, nowMs)).join('\n')}</tbody></table>`;
  const waiting =
    server.deliveriesWaiting.length === 0
      ? '<p class="quiet">No SMPP account yet.</p>'
      : `<table id="smpp-waiting"><thead><tr><th>account (system_id)</th><th>receipts and inbound messages waiting</th></tr></thead>
<tbody>${server.deliveriesWaiting.map((d) => `<tr data-smpp-account="${escapeHtml(d.systemId)}"><td>${escapeHtml(d.systemId)}</td><td class="num waiting">${d.waiting}</td></tr>`).join('\n')}</tbody></table>`;
  return `${sessions}
<h3>Waiting for the customer</h3>${waiting}
<p class="quiet">Waiting: deliver_sm stored for the account, sent on its next receiver or transceiver bind (kept up to smppServer.receiptRetentionHours).</p>`;
}

function errorsSection(facts: StatusFacts): string {
  if (facts.recentErrors === null) return '<p>Not known: smsgate serve is not answering.</p>';
  if (facts.recentErrors.length === 0) return '<p class="quiet">None since start.</p>';
  const more = facts.recentErrors.length - RECENT_ERRORS_SHOWN;
  const rows = facts.recentErrors
    .slice(0, RECENT_ERRORS_SHOWN)
    .map((e) => {
      const context = Object.entries(e.context).map(([k, v]) => `${escapeHtml(k)}=${escapeHtml(v)}`).join(' ');
      return `<tr><td class="when">${escapeHtml(new Date(e.atMs).toISOString())}</td><td>${stateBadge(e.level)}</td><td>${escapeHtml(e.message)}</td><td class="quiet">${context}</td></tr>`;
    })
    .join('\n');
  const note = more > 0 ? `<p class="quiet">The ${RECENT_ERRORS_SHOWN} newest; ${more} older in /status.json.</p>` : '';
  return `<table id="errors"><thead><tr><th>time</th><th>level</th><th>message</th><th>context</th></tr></thead><tbody>${rows}</tbody></table>${note}`;
}

const STYLE = `
body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1d2433;background:#f6f7f9}
h1{font-size:1.3rem;margin:0 0 .2rem}h2{font-size:1.05rem;margin:1.6rem 0 .5rem}
table{border-collapse:collapse;width:100%;background:#fff;box-shadow:0 1px 2px #0001}
th,td{padding:.35rem .6rem;border-bottom:1px solid #e3e6eb;text-align:left;vertical-align:top}
th{font-weight:600;background:#eef1f5}.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}
.quiet{color:#6b7385;font-size:.9em}.err{color:#a3261b;max-width:28rem;overflow-wrap:anywhere}
.state{display:inline-block;padding:0 .45rem;border-radius:.6rem;font-size:.85em;font-weight:600}
.state-bound{background:#d7f5dd;color:#145a24}.state-binding{background:#fff1c2;color:#6b5200}
.state-down,.state-error,.state-fatal,.state-breaker-open{background:#fbd9d5;color:#8a1f14}.state-warn,.state-breaker-half-open{background:#fff1c2;color:#6b5200}
.state-breaker-closed{background:#d7f5dd;color:#145a24}.state-low{background:#fbd9d5;color:#8a1f14;margin-left:.4rem}h3{font-size:.95rem;margin:1rem 0 .4rem}
.banner{padding:.6rem .9rem;margin:.8rem 0;border-radius:.3rem;border:1px solid}.banner ul{margin:.3rem 0 0;padding-left:1.2rem}
.banner.ready{background:#d7f5dd;border-color:#8fd19e;color:#145a24}.banner.not-ready{background:#fbd9d5;border-color:#e8a49c;color:#8a1f14}
.banner.unknown{background:#eef1f5;border-color:#c9ced8}
.outcomes div{white-space:nowrap}.counts{display:inline;margin:0;padding:0}.counts li{display:inline;margin-left:.5rem;color:#6b7385}
.counts li::before{content:"·";margin-right:.4rem}.code{font-family:ui-monospace,monospace;font-size:.9em}tr.finished{background:#fafbfc}td.when{white-space:nowrap}
.bar{display:flex;height:.8rem;width:16rem;background:#e3e6eb;border-radius:.2rem;overflow:hidden}
.bar.thin{height:.3rem;margin-top:.2rem}.bar .delivered{background:#2f9e44}.bar .undelivered{background:#e03131}.bar .sent{background:#4263eb}
.notice{background:#e7f0ff;border:1px solid #b6cdfa;padding:.5rem .8rem;margin:.8rem 0}
button{font:inherit;padding:.15rem .6rem;cursor:pointer}form{margin:0}`;

function gatewayLine(facts: StatusFacts): string {
  const g = facts.gateway;
  if (g === null) return '';
  return `smsgate <span id="version">${escapeHtml(g.version)}</span>, up <span id="uptime" title="since ${escapeHtml(g.startedAt)}">${escapeHtml(duration(g.uptimeSeconds))}</span>. `;
}

export function renderStatusPage(facts: StatusFacts, options: StatusPageOptions): string {
  const nowMs = Date.parse(facts.generatedAt);
  const refresh = options.refreshSeconds ?? STATUS_REFRESH_SECONDS;
  const notice = options.notice === undefined ? '' : `<p class="notice" role="status">${escapeHtml(options.notice)}</p>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="refresh" content="${refresh}; url=/status">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>smsgate status</title><style>${STYLE}</style></head>
<body>
<h1>smsgate status</h1>
<div class="quiet">${gatewayLine(facts)}As of <time id="generated" datetime="${escapeHtml(facts.generatedAt)}">${escapeHtml(facts.generatedAt)}</time>; refreshes every ${refresh} s. Dead letters in all: <span id="dead-letters">${facts.webhooks.deadLetters}</span>.${configLine(facts)}</div>
${readinessBanner(facts)}
${notice}
<h2>Transports</h2>${transportsSection(facts, nowMs)}
<h2>Routes</h2>${routesSection(facts)}
<h2>Modems</h2>${modemsSection(facts)}
<h2>Queues</h2>${queuesSection(facts)}
<h2>Campaigns (in progress, then recently finished)</h2>${campaignsSection(facts)}
<h2>Webhooks</h2>${webhooksSection(facts, options.csrfToken, nowMs)}
<h2>Credits</h2>${creditsSection(facts)}
<h2>SMPP server (customers)</h2>${smppServerSection(facts, nowMs)}
<h2>Recent errors</h2>${errorsSection(facts)}
</body></html>`;
}
