/**
 * A node frozen past its lease is fenced out and rejoins. Three real
 * `smsgate serve` nodes on one throwaway PostgreSQL send a campaign through a carrier allowing 2
 * binds; a node holding a bind is stopped with SIGSTOP (its TCP links stay open: the carrier and
 * the database still see it) until a live node has taken it over (its row is gone from
 * cluster_nodes, its lease of about 5 s having run out), then SIGCONT. What it finds on waking (the
 * submit_sm_resp of the parts it had in flight, its heartbeat) must not win over the takeover:
 * - it is fenced out and rejoins under a new id (cluster_nodes: same pid, another id);
 * - its late writes are refused: every part that was sent again keeps the id of its LAST submit
 *   (the survivor's), never the frozen node's older one it woke up holding;
 * - what it sends again once woken, what the cluster sends again of the parts sent before it woke,
 *   and every extra submit of the run in all, stay within binds x window; the carrier refuses no
 *   bind; nothing is lost, binds within the limit, the rate within the cap plus one window (the
 *   accounting of cluster-setup.ts).
 */
import { describe, expect, it } from 'vitest';
import { readRows, type ClusterNode } from '../support/cluster-nodes.js';
import { bindHolders, campaignBody, expectNothingLost, finalSummary, msisdnsFor, useClusterPeers } from './cluster-setup.js';
import { postCampaign, until } from './e2e-setup.js';

const NODES = 3;
const RECIPIENTS = 6_000;
const BOUNDS = { binds: 2, window: 40, maxPerSecond: 200 };
/** A lease of about 5 s; a takeover comes within a few heartbeats after it. */
const TAKEOVER_DEADLINE_MS = 30_000;

// A carrier gives up on a deliver_sm the frozen node does not answer and offers it on another bind.
const peers = useClusterPeers('cluster-fencing', { maxBinds: BOUNDS.binds, receiptResponseTimeoutMs: 2_000 });

/** The node's JSON log entries whose message starts with `prefix` (pino: the text is `msg`). */
function logEntries(node: ClusterNode, prefix: string): Record<string, unknown>[] {
  return node.logLines.flatMap((line) => {
    try {
      const entry = JSON.parse(line) as Record<string, unknown>;
      return typeof entry['msg'] === 'string' && entry['msg'].startsWith(prefix) ? [entry] : [];
    } catch {
      return [];
    }
  });
}

async function nodeIdsOf(node: ClusterNode): Promise<string[]> {
  const rows = await readRows<{ id: string }>(peers().database, `SELECT id FROM cluster_nodes WHERE pid = ${node.pid} ORDER BY started_at`);
  return rows.map((r) => r.id);
}

describe('a node frozen past its lease (SIGSTOP, then SIGCONT)', () => {
  it('is fenced out, its late writes are refused, it rejoins under a new id, and nothing is lost', async () => {
    const { database, carrier, receiver: webhooks } = peers();
    const cluster = await peers().startNodes(NODES, BOUNDS);
    const { nodes } = cluster;

    const msisdns = msisdnsFor(RECIPIENTS);
    const { status, id } = await postCampaign(cluster.node(0).baseUrl, cluster.account.token, campaignBody(msisdns));
    expect(status).toBe(202);
    await until(() => carrier.submitCount, (n) => n >= RECIPIENTS * 0.2, 120_000, '20% of the submits');

    // Where a slow run spent its time, should it run out of it.
    const startedAtMs = Date.now();
    const progress = (stage: string): void => console.log(`${stage} after ${Date.now() - startedAtMs} ms, ${carrier.submitCount} submits`);
    progress('20% submitted');
    const victim = bindHolders(nodes, carrier.address.port)[0] as ClusterNode;
    const [idBefore] = await nodeIdsOf(victim);
    expect(idBefore).toBeDefined();
    const victimPorts = new Set(victim.localPortsTo(carrier.address.port));
    victim.kill('SIGSTOP');
    const frozenAtMs = Date.now();
    const submitsAtStop = carrier.submitCount;

    // Past its lease: a live node took it over (its row reaped) while the other bind carried on.
    await until(async () => (await nodeIdsOf(victim)).includes(idBefore as string), (present) => !present, TAKEOVER_DEADLINE_MS, 'the frozen node reaped').catch(
      async (err: Error) => {
        // Say why: sessions left inside a transaction by the frozen node, and who waits on their locks.
        const sessions = await readRows<{ state: string; wait: string | null; n: number }>(
          database,
          `SELECT state, wait_event_type || ':' || wait_event AS wait, CAST(COUNT(*) AS INTEGER) AS n FROM pg_stat_activity
            WHERE backend_type = 'client backend' GROUP BY 1, 2 ORDER BY 1, 2`,
        );
        throw new Error(`${err.message}; database sessions: ${JSON.stringify(sessions)}`);
      },
    );
    progress('frozen node reaped');
    await until(() => carrier.submitCount, (n) => n > submitsAtStop + BOUNDS.window, 30_000, 'the live nodes sending on');
    const continuedAtMs = Date.now();
    victim.kill('SIGCONT');

    // It finds itself fenced and joins again: the same process under a new id.
    const rejoined = await until(() => nodeIdsOf(victim), (ids) => ids.length === 1 && ids[0] !== idBefore, TAKEOVER_DEADLINE_MS, 'the node rejoined under a new id');
    expect(rejoined).not.toContain(idBefore);
    expect(victim.exited).toBe(false);
    // It says so, and a survivor says it took the old id over.
    const fenced = await until(() => logEntries(victim, 'fenced out of the cluster'), (entries) => entries.length > 0, TAKEOVER_DEADLINE_MS, 'the fenced log line');
    expect(fenced).toEqual([expect.objectContaining({ formerId: idBefore, newId: rejoined[0] })]);
    const takeovers = nodes.filter((node) => node !== victim).flatMap((node) => logEntries(node, 'took over from nodes'));
    expect(takeovers.some((entry) => (entry['nodeIds'] as string[]).includes(idBefore as string))).toBe(true);

    progress('woken node rejoined');
    const summary = await finalSummary(nodes, cluster.account.token, id, 150_000);
    progress('every recipient final');
    // For a failure's message: what the woken node sent on its old bind of parts already sent.
    // The woken node's own re-sends of parts first sent before it woke (by it before the freeze, or
    // by a peer that took them over): what the fencing and the lease hold-back are for.
    const sentBeforeWaking = new Set<string>();
    let resentByWokenNode = 0;
    let wokenResendsOfLaterParts = 0;
    const seen = new Set<string>();
    for (const submit of carrier.submitLog) {
      if (submit.atMs < continuedAtMs) sentBeforeWaking.add(submit.destination);
      else if (victimPorts.has(submit.remotePort) && seen.has(submit.destination)) {
        if (sentBeforeWaking.has(submit.destination)) resentByWokenNode++;
        else wokenResendsOfLaterParts++;
      }
      seen.add(submit.destination);
    }
    console.log(`after SIGCONT the woken node sent again ${resentByWokenNode} parts first sent before it woke, and ${wokenResendsOfLaterParts} parts first sent after it woke`);
    // For a failure's message: each part sent more than once, grouped by who sent it first and
    // again (node index, or ? for a port no node has now) and when, in seconds from the freeze.
    // Who holds which local port towards the carrier: ONE look at /proc per node. The carrier runs
    // in this process, so nothing here may block it: a look per submit (about 10 ms each, 3 x 6,000
    // of them) held the event loop for a minute or more, the nodes' enquire_link went unanswered
    // (ENQUIRE_LINK_TIMEOUT), they dropped their binds and bound again, and the carrier, reading a
    // new bind before the old socket's close, refused it: the "refused bind while the nodes were
    // idle" this test used to print as an open defect was this loop, not the cluster.
    const portOwner = new Map<number, number>();
    for (const node of nodes) if (!node.exited) for (const port of node.localPortsTo(carrier.address.port)) portOwner.set(port, node.index);
    for (const port of victimPorts) if (!portOwner.has(port)) portOwner.set(port, victim.index);
    const nodeOfPort = (port: number): string => String(portOwner.get(port) ?? '?');
    const sends = new Map<string, string[]>();
    for (const submit of carrier.submitLog) {
      const at = Math.floor((submit.atMs - frozenAtMs) / 1000);
      const history = sends.get(submit.destination) ?? [];
      history.push(`n${nodeOfPort(submit.remotePort)}@${at}s`);
      sends.set(submit.destination, history);
    }
    const resentPattern = new Map<string, number>();
    for (const history of sends.values()) if (history.length > 1) resentPattern.set(history.join(' then '), (resentPattern.get(history.join(' then ')) ?? 0) + 1);
    console.log(`sent more than once (node@seconds from the freeze, continued at ${Math.round((continuedAtMs - frozenAtMs) / 1000)} s): ${JSON.stringify([...resentPattern])}`);
    for (const node of nodes) {
      const said = [...logEntries(node, 'fenced out'), ...logEntries(node, 'took over')].map((e) => `${e['time']} ${e['msg']?.toString().slice(0, 40)} ${JSON.stringify(e['nodeIds'] ?? e['formerId'])}`);
      console.log(`node ${node.index}${node === victim ? ' (frozen)' : ''}: ${said.join('; ') || 'no takeover or fencing'}`);
    }
    // What the cluster sends again of the parts sent before the node woke (those it had on the wire
    // or unrecorded when it froze) is bounded by binds x window: each node's engine window is
    // `window` x the bind slots it holds. So is what the woken node itself sends again.
    const firstSentAtMs = new Map<string, number>();
    let extraOfPartsSentBeforeWaking = 0;
    for (const submit of carrier.submitLog) {
      const first = firstSentAtMs.get(submit.destination);
      if (first === undefined) firstSentAtMs.set(submit.destination, submit.atMs);
      else if (first < continuedAtMs) extraOfPartsSentBeforeWaking++;
    }
    console.log(`parts sent before the node woke and sent again: ${extraOfPartsSentBeforeWaking} extra submits`);
    expect(extraOfPartsSentBeforeWaking).toBeLessThanOrEqual(BOUNDS.binds * BOUNDS.window);
    expect(resentByWokenNode).toBeLessThanOrEqual(BOUNDS.binds * BOUNDS.window);
    // Nor are the parts it first sent after waking sent again beyond that. The woken node can hold
    // a part twice: a stale copy claimed under its former id (requeued by the takeover) and the one
    // it claimed again under its new id. The stale copy's outcome is fenced on the id it was
    // claimed under, so it cannot end the new claim and leave the part to be sent again (it used
    // to: 60 parts sent a second time about 30 s later in one run).
    expect(wokenResendsOfLaterParts).toBeLessThanOrEqual(BOUNDS.binds * BOUNDS.window);
    // The whole run, every part: extra submits within binds x window, and no bind the carrier had
    // to refuse (expectNothingLost). The freeze's own re-sends are what the frozen node had on the
    // wire, within its window (window x its one slot); a survivor fenced under load would add its
    // own window at most. A run once counted 156 extra submits against 80: besides the freeze's
    // 40, the woken node's stale copies of parts (claimed under its former id, requeued by the
    // takeover) ended the claims it made again under its new id, so those parts were sent again
    // about 30 s later; outcomes are now fenced on the id the parts were claimed under.
    if (carrier.refusedBinds.length > 0) console.log(`binds refused: ${JSON.stringify(carrier.refusedBinds)}; node ports ${JSON.stringify([...portOwner])}`);
    // The webhooks trail the receipts: on a loaded machine the last of 6,000 came more than a minute
    // after every recipient was final (the /proc loop above used to give them that minute unseen).
    const figures = await expectNothingLost({ database, smsc: carrier, receiver: webhooks, msisdns, summary, bounds: BOUNDS, webhookTimeoutMs: 180_000 });

    // Its late writes were refused: a part sent again holds the id of its last submit, not the
    // older one the frozen node woke up to (carrier ids increase with every submit).
    const resent = [...carrier.submitsByDestination].filter(([, n]) => n > 1).map(([destination]) => destination);
    const lastIdOf = new Map<string, number>();
    for (const [messageId, destination] of carrier.destinationByMessageId) {
      lastIdOf.set(destination, Math.max(lastIdOf.get(destination) ?? 0, Number(messageId)));
    }
    const parts = await readRows<{ msisdn: string; message_id: string }>(
      database,
      'SELECT r.msisdn AS msisdn, p.message_id AS message_id FROM message_parts p JOIN recipients r ON r.id = p.recipient_id',
    );
    const idOfPart = new Map(parts.map((p) => [p.msisdn, p.message_id]));
    for (const destination of resent) expect(idOfPart.get(destination), destination).toBe(String(lastIdOf.get(destination)));
    console.log(`cluster fencing: node ${victim.index} frozen at ${submitsAtStop} submits, ${resent.length} parts sent again; ${JSON.stringify(figures)}`);

    expect(await cluster.stopAll()).toEqual(nodes.map(() => 0));
  }, 600_000);
});
