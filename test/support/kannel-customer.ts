/**
 * Kannel (Debian package `kannel`: bearerbox + smsbox) as a peer: its kannel.conf written here for
 * the tests and for the e2e bench alike (kannelConf), and Kannel as an SMPP customer of smsgate's
 * server (KannelCustomer): one `smsc = smpp` group in transceiver mode pointed at a given host,
 * port, system-id and password, a sendsms user, messages sent through smsbox's sendsms HTTP
 * interface with a dlr-mask and a dlr-url to a test HTTP receiver (Kannel user guide, "Kannel HTTP
 * interface" and "SMPP"). Both boxes run as peer processes (test/support/peer-process.ts) with
 * their config, store and logs under their own temp dir and on free ports, never the packaged
 * daemons' (.ci/run stops those right after installing the package).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';
import { spawnPeer, stopPeers } from './peer-process.js';
import { pollUntil, portAccepts } from './poll-until.js';
import type { WebhookReceiver } from './webhook-receiver.js';

export const BEARERBOX = '/usr/sbin/bearerbox';
export const SMSBOX = '/usr/sbin/smsbox';

/** Why Kannel cannot run here, or undefined when both boxes are installed. */
export function kannelMissing(): string | undefined {
  return existsSync(BEARERBOX) && existsSync(SMSBOX) ? undefined : `${BEARERBOX} or ${SMSBOX} not found (install the Debian package: apt-get install -y kannel)`;
}

/** One `group = smsc` with `smsc = smpp` (Kannel user guide, "SMPP"); `binds` writes it that many times (one SMPP bind each, balanced by bearerbox). */
export interface KannelSmscGroup {
  smscId: string;
  host: string;
  port: number;
  systemId: string;
  password: string;
  binds: number;
  maxPendingSubmits: number;
  /**
   * msg-id-type: how Kannel reads the SMSC's message ids (bit 0: receipts' ids hex, bit 1:
   * submit_sm_resp's hex), turning them into numbers to match receipts with messages. Unset
   * (undefined): ids are matched as the strings they are, which ids that are not numbers (UUIDs,
   * as smsgate gives) need.
   */
  msgIdType?: number;
  /**
   * dest-addr-ton / dest-addr-npi for every submit_sm; unset: Kannel's own choice (TON 2 national
   * for a number written without a leading +, international with the + removed otherwise).
   */
  destAddr?: { ton: number; npi: number };
  logLevel: number;
}

export interface KannelConfOptions {
  /** Logs and the store go here. */
  dir: string;
  ports: { admin: number; smsbox: number; sendsms: number };
  adminPassword: string;
  logLevel: number;
  smsc: KannelSmscGroup;
  sendsmsUser: { username: string; password: string };
  /** smsbox's dlr-url callbacks (and other HTTP requests) in flight. */
  maxPendingRequests?: number;
}

/**
 * kannel.conf (Kannel 1.4 user guide): the core group (admin and smsbox ports on 127.0.0.1, store-type
 * file: a durable queue; dlr-storage internal: no database), the smsc groups, one smsbox and one
 * sendsms-user. immediate-sendsms-reply stays off: sendsms answers once bearerbox has queued the message.
 */
export function kannelConf(options: KannelConfOptions): string {
  const { smsc } = options;
  const smscGroup = `group = smsc
smsc = smpp
smsc-id = ${smsc.smscId}
host = ${smsc.host}
port = ${smsc.port}
transceiver-mode = true
smsc-username = ${smsc.systemId}
smsc-password = ${smsc.password}
system-type = ""
max-pending-submits = ${smsc.maxPendingSubmits}
${smsc.msgIdType === undefined ? '' : `msg-id-type = 0x${smsc.msgIdType.toString(16).padStart(2, '0')}\n`}${
    smsc.destAddr === undefined ? '' : `dest-addr-ton = ${smsc.destAddr.ton}\ndest-addr-npi = ${smsc.destAddr.npi}\n`}log-level = ${smsc.logLevel}
`;
  return `group = core
admin-port = ${options.ports.admin}
admin-password = ${options.adminPassword}
smsbox-port = ${options.ports.smsbox}
box-allow-ip = 127.0.0.1
log-file = "${join(options.dir, 'bearerbox.log')}"
log-level = ${options.logLevel}
store-type = file
store-location = "${join(options.dir, 'kannel.store')}"
dlr-storage = internal

${Array.from({ length: smsc.binds }, () => smscGroup).join('\n')}
group = smsbox
bearerbox-host = 127.0.0.1
sendsms-port = ${options.ports.sendsms}
log-file = "${join(options.dir, 'smsbox.log')}"
log-level = ${options.logLevel}
${options.maxPendingRequests === undefined ? '' : `max-pending-requests = ${options.maxPendingRequests}\n`}
group = sendsms-user
username = ${options.sendsmsUser.username}
password = ${options.sendsmsUser.password}
concatenation = true
max-messages = 10
`;
}

/** The last lines of both boxes' logs, for a failure message (the dir is removed afterwards). */
export function kannelLogTails(dir: string, lines = 5): string {
  return ['bearerbox.log', 'smsbox.log']
    .map((name) => {
      try {
        return `${name}: ${readFileSync(join(dir, name), 'utf8').trim().split('\n').slice(-lines).join('\n  ')}`;
      } catch {
        return `${name}: (none)`;
      }
    })
    .join('\n');
}

/** Starts bearerbox, then smsbox once bearerbox's smsbox port accepts; both as peer processes. */
export async function startKannelBoxes(confPath: string, ports: KannelConfOptions['ports'], dir: string, timeoutMs = 15_000): Promise<ChildProcess[]> {
  const missing = kannelMissing();
  if (missing !== undefined) throw new Error(missing);
  const boxes: ChildProcess[] = [];
  try {
    boxes.push(spawnPeer(BEARERBOX, [confPath], { stdio: 'ignore' }));
    await pollUntil(() => portAccepts(ports.smsbox), timeoutMs, () => `bearerbox's smsbox-port\n${kannelLogTails(dir)}`);
    boxes.push(spawnPeer(SMSBOX, [confPath], { stdio: 'ignore' }));
    await pollUntil(() => portAccepts(ports.sendsms), timeoutMs, () => `smsbox's sendsms-port\n${kannelLogTails(dir)}`);
    return boxes;
  } catch (err) {
    await stopKannelBoxes(boxes);
    throw err;
  }
}

/** smsbox first, then bearerbox: SIGTERM, SIGKILL after the peers' grace period. */
export async function stopKannelBoxes(boxes: readonly ChildProcess[]): Promise<void> {
  await stopPeers([...boxes].reverse());
}

/** One GET; resolves with the status code and body. */
export function httpGet(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  });
}

export interface KannelCustomerOptions {
  /** The SMPP server Kannel binds to as a customer (transceiver). */
  smsc: { host: string; port: number; systemId: string; password: string };
  /** Where smsbox sends each DLR (a WebhookReceiver's url): the query names the message, see dlrsFrom. */
  dlrUrl: string;
  /** SMPP binds (smsc groups of one smsc-id; default 1). */
  binds?: number;
  /** Default unset: message ids matched as strings (see KannelSmscGroup.msgIdType). */
  msgIdType?: number;
  /** Kannel's log level for both boxes (default 1: info). */
  logLevel?: number;
}

/** A DLR as smsbox called the dlr-url with it (Kannel user guide, "Delivery reports": %d, %p, %F, %A). */
export interface KannelDlr {
  /** The recipient (%p), without a leading +. */
  to: string;
  /** %d: 1 delivered, 2 failed, 4 buffered, 8 SMSC accepted, 16 SMSC rejected. */
  type: number;
  /** %F: the message id the SMSC gave in submit_sm_resp. */
  smscMessageId: string;
  /** %A: the receipt text. */
  text: string;
}

/** Kannel's DLR type %d for a final delivered report. */
export const KANNEL_DLR_DELIVERED = 1;
/** Delivered or failed: the final outcomes. */
const DLR_MASK_FINAL = 3;

export class KannelCustomer {
  private constructor(
    readonly dir: string,
    private readonly boxes: ChildProcess[],
    private readonly ports: KannelConfOptions['ports'],
    private readonly options: KannelCustomerOptions,
  ) {}

  static async start(options: KannelCustomerOptions): Promise<KannelCustomer> {
    const dir = mkdtempSync(join(tmpdir(), 'smsgate-kannel-customer-'));
    try {
      const ports = { admin: await freePort(), smsbox: await freePort(), sendsms: await freePort() };
      const confPath = join(dir, 'kannel.conf');
      const logLevel = options.logLevel ?? 1;
      writeFileSync(confPath, kannelConf({
        dir, ports, adminPassword: 'admin', logLevel,
        smsc: {
          smscId: 'smsgate', host: options.smsc.host, port: options.smsc.port, systemId: options.smsc.systemId,
          password: options.smsc.password, binds: options.binds ?? 1, maxPendingSubmits: 10, logLevel,
          // The tests' numbers are international, written without a +: say so (TON 1, NPI 1 E.164).
          destAddr: { ton: 1, npi: 1 },
          ...(options.msgIdType === undefined ? {} : { msgIdType: options.msgIdType }),
        },
        sendsmsUser: { username: 'customer', password: 'customer' },
      }));
      const boxes = await startKannelBoxes(confPath, ports, dir);
      return new KannelCustomer(dir, boxes, ports, options);
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /** bearerbox's status page (admin HTTP interface, status.txt). */
  async status(): Promise<string> {
    return (await httpGet(this.ports.admin, '/status.txt?password=admin')).body;
  }

  /** Waits until every SMPP bind of the smsc group is online (bound to the server). */
  async waitUntilOnline(timeoutMs = 20_000): Promise<void> {
    const binds = this.options.binds ?? 1;
    await pollUntil(
      async () => ((await this.status().catch(() => '')).match(/\(online \d+s/g) ?? []).length >= binds,
      timeoutMs,
      () => `Kannel's ${binds} SMPP bind(s) to ${this.options.smsc.host}:${this.options.smsc.port} online\n${kannelLogTails(this.dir)}`,
    );
  }

  /** Sends one message through sendsms with dlr-mask 3 and the dlr-url; resolves with the HTTP status (202: queued). */
  async send(message: { from: string; to: string; text: string; dlrMask?: number }): Promise<number> {
    const query = new URLSearchParams({
      username: 'customer', password: 'customer', from: message.from, to: message.to, text: message.text,
      'dlr-mask': String(message.dlrMask ?? DLR_MASK_FINAL),
      // Kannel expands the escapes when it calls the URL (user guide, "Delivery reports").
      'dlr-url': `${this.options.dlrUrl}?to=%p&type=%d&fid=%F&text=%A`,
    });
    return (await httpGet(this.ports.sendsms, `/cgi-bin/sendsms?${query.toString()}`)).status;
  }

  /** The DLRs smsbox has called the receiver's url with so far. */
  dlrsFrom(receiver: WebhookReceiver): KannelDlr[] {
    return receiver.requests.flatMap((req) => {
      const at = req.path.indexOf('?');
      if (at < 0) return [];
      const query = new URLSearchParams(req.path.slice(at + 1));
      const to = query.get('to');
      if (to === null) return [];
      return [{ to: to.replace(/^\+/, ''), type: Number(query.get('type')), smscMessageId: query.get('fid') ?? '', text: query.get('text') ?? '' }];
    });
  }

  logTails(lines = 20): string {
    return kannelLogTails(this.dir, lines);
  }

  /** Stops both boxes and removes the dir. */
  async stop(): Promise<void> {
    await stopKannelBoxes(this.boxes);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
