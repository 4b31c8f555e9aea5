/**
 * What smsgate does with one modem over an AtChannel: initialise it from its profile, send a
 * PDU, read its identity and health, and turn unsolicited reports (+CDS, +CDSI, +CMT, +CMTI)
 * into decoded status reports and inbound messages, acknowledging or deleting each only after
 * the handler's promise resolved.
 */
import type { Logger } from 'pino';
import { type Clock, sleep, systemClock } from '../../common/clock.js';
import { GatewayError, isGatewayError } from '../../common/errors.js';
import { type DecodedDeliver, type DecodedPdu, type DecodedStatusReport, decodePdu } from '../../pdu/index.js';
import { MAX_STATUS_CHARS } from '../../receipts/index.js';
import type { AtChannel, AtResponse, Urc } from './at-channel.js';
import { redactAtCommand } from './at-command-redaction.js';
import { type FinalResult, splitArgs } from './at-line.js';
import { isTemporaryCmeError, isTemporaryCmsError } from './cms-errors.js';
import type { ModemProfile } from './profile.js';

export type SendResult =
  | { kind: 'accepted'; messageReference: number }
  /** The modem answered with an error: nothing was sent. */
  | { kind: 'rejected'; status: string; errorCode: number | undefined; temporary: boolean }
  /** Nothing went out (no prompt, or the link dropped before the PDU): safe to send elsewhere. */
  | { kind: 'not-sent'; status: 'PROMPT_TIMEOUT' | 'DEVICE_LOST' }
  /** The PDU went out but no result came back: the network may have the message. */
  | { kind: 'unknown'; status: 'RESULT_UNKNOWN' };

/** TS 27.007 §7.2 <stat>: 1 registered home, 5 registered roaming. */
export const REGISTERED_STATS: ReadonlySet<number> = new Set([1, 5]);

/** TS 27.007 §7.2 <stat> names for logs and probe output. */
export const REGISTRATION_NAMES: Readonly<Record<number, string>> = {
  0: 'not-registered',
  1: 'registered-home',
  2: 'searching',
  3: 'denied',
  4: 'unknown',
  5: 'registered-roaming',
};

export interface ModemHealth {
  /** TS 27.007 §8.5 +CSQ <rssi> (0..31, 99 unknown) and its dBm (-113 + 2 * rssi). */
  rssi: number | null;
  signalDbm: number | null;
  registration: string;
  operator: string | null;
}

export interface ModemIdentity {
  manufacturer: string | null;
  model: string | null;
  revision: string | null;
  imei: string | null;
  simState: string | null;
}

export interface SessionHandlers {
  /** Resolve once the report is stored; reject to leave it unacknowledged. */
  onStatusReport(report: DecodedStatusReport, hex: string): Promise<void>;
  onInbound(message: DecodedDeliver, hex: string): Promise<void>;
  /** Resolve once the undecodable PDU is stored with its reason; reject to leave it on the SIM / unacknowledged. */
  onUndecodable(hex: string, reason: UndecodableReason): Promise<void>;
}

export interface UndecodableReason {
  /** The decoder's GatewayError code (PDU_TRUNCATED, PDU_BAD_USER_DATA...), or PDU_UNDECODABLE. */
  code: string;
  message: string;
}

type DecodeResult = { ok: true; pdu: DecodedPdu } | { ok: false; reason: UndecodableReason };

export interface SessionOptions {
  profile: ModemProfile;
  pin?: string | undefined;
  smsc?: string | undefined;
  registrationTimeoutMs: number;
  /** Pause between registration polls. Default 1 s. */
  registrationPollMs?: number;
  /** The registration wait's deadline and polls run on this clock (default: the system clock). */
  clock?: Clock;
  logger: Logger;
  handlers: SessionHandlers;
}

/**
 * Finals as a short status for logs and outcomes: 'CMS_ERROR_332', 'CME_ERROR_10', 'ERROR'. A
 * vendor's free-text error is cut to the status field's MAX_STATUS_CHARS (SPEC "Delivery Receipt": Status, max 30).
 */
export function finalStatus(final: FinalResult): string {
  if (final.kind === 'cms-error') return final.code === null ? 'CMS_ERROR' : `CMS_ERROR_${final.code}`;
  if (final.kind === 'cme-error') return final.code === null ? 'CME_ERROR' : `CME_ERROR_${final.code}`;
  if (final.kind === 'error') return final.text.replace(/\s+/g, '_').slice(0, MAX_STATUS_CHARS);
  return 'OK';
}

function infoValue(response: AtResponse, prefix: string): string | null {
  const line = response.lines.find((l) => l.startsWith(`${prefix}:`));
  return line === undefined ? null : line.slice(prefix.length + 1).trim();
}

/**
 * The value of a V.250 / TS 27.007 identification answer (AT+CGMI, +CGMM, +CGMR, +CGSN): a bare
 * line, though some firmwares prefix it with the command name ('+CGSN: "8612..."').
 */
function plainValue(response: AtResponse): string | null {
  const line = response.lines.find((l) => l.trim() !== '');
  if (line === undefined) return null;
  const prefixed = /^\+(?:CGMI|CGMM|CGMR|CGSN|GMI|GMM|GMR|GSN):\s*(.*)$/.exec(line.trim());
  return (prefixed ? (prefixed[1] ?? '') : line.trim()).replace(/^"(.*)"$/, '$1');
}


export class ModemSession {
  /** Storage indexes being read (by storage), so a +CDSI and an AT+CMGL never handle one message twice. */
  private readonly indexesInHand = new Set<string>();
  /** AT+CPMS switches and the reads under them run one at a time (a switch changes what every read addresses). */
  private storageQueue: Promise<void> = Promise.resolve();
  private readonly clock: Clock;

  constructor(
    private readonly channel: AtChannel,
    private readonly options: SessionOptions,
  ) {
    this.clock = options.clock ?? systemClock();
  }

  private get timeouts(): ModemProfile['timeouts'] {
    return this.options.profile.timeouts;
  }

  async run(command: string, expectPrefix?: string, timeoutMs = this.timeouts.commandMs): Promise<AtResponse> {
    const response = await this.channel.command(command, { timeoutMs, ...(expectPrefix === undefined ? {} : { expectPrefix }) });
    this.options.logger.debug({ command: redactAtCommand(command), final: finalStatus(response.final) }, 'at command');
    return response;
  }

  /** Runs a command that must end in OK; anything else is MODEM_INIT_FAILED naming the command. */
  private async ok(command: string, expectPrefix?: string): Promise<AtResponse> {
    const response = await this.run(command, expectPrefix);
    if (response.final.kind !== 'ok') {
      throw new GatewayError('MODEM_COMMAND_FAILED', `${redactAtCommand(command)} answered ${finalStatus(response.final)}`, {
        retryable: true,
        details: { command: redactAtCommand(command), status: finalStatus(response.final) },
      });
    }
    return response;
  }

  /** V.250: a modem still booting (or auto-bauding, SIM800) may miss the first ATs. */
  private async sync(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const response = await this.run('AT', undefined, 1_000);
        if (response.final.kind === 'ok') return;
      } catch (err) {
        if (!isGatewayError(err, 'AT_TIMEOUT') || attempt >= 5) throw err;
      }
      if (attempt >= 5) throw new GatewayError('MODEM_NOT_RESPONDING', 'modem does not answer AT', { retryable: true });
    }
  }

  /** Runs a command whose failure is worth a warning but not a dead device (optional features). */
  private async tolerate(command: string, expectPrefix?: string): Promise<boolean> {
    const response = await this.run(command, expectPrefix);
    if (response.final.kind === 'ok') return true;
    this.options.logger.warn({ command: redactAtCommand(command), status: finalStatus(response.final) }, 'modem refused an optional setting; continuing');
    return false;
  }

  async init(): Promise<void> {
    const { profile } = this.options;
    await this.sync();
    await this.ok('ATE0');
    // Without +CMEE errors are a bare ERROR: still handled (as temporary), only less precise.
    await this.tolerate(`AT+CMEE=${profile.cmee}`);
    for (const command of profile.initCommands) await this.tolerate(command);
    await this.unlockSim();
    await this.waitForRegistration();
    await this.ok('AT+CMGF=0');
    if (this.options.smsc !== undefined) {
      const smsc = this.options.smsc;
      // TS 27.005 §3.3.1 +CSCA=<sca>,<tosca>: 145 international, 129 unknown.
      await this.ok(`AT+CSCA="${smsc}",${smsc.startsWith('+') ? 145 : 129}`);
    }
    if (profile.csms !== null) await this.tolerate(`AT+CSMS=${profile.csms}`, '+CSMS');
    if (profile.messageStorage !== null) {
      const store = profile.messageStorage;
      await this.tolerate(`AT+CPMS="${store}","${store}","${store}"`, '+CPMS');
    }
    // Sending works without +CNMI; only reports and inbound SMS would not be announced, so say so loudly.
    if (!(await this.tolerate(`AT+CNMI=${profile.cnmi}`))) {
      this.options.logger.error({ cnmi: profile.cnmi }, 'AT+CNMI refused: status reports and incoming SMS will not be announced');
    }
  }

  private async unlockSim(): Promise<void> {
    const response = await this.run('AT+CPIN?', '+CPIN');
    const state = infoValue(response, '+CPIN');
    if (response.final.kind === 'error') {
      // A plain ERROR (no +CME code): a modem without AT+CPIN?; registration below still gates sending.
      this.options.logger.warn('AT+CPIN? not supported; assuming the SIM is ready');
      return;
    }
    if (response.final.kind !== 'ok' || state === null) {
      throw new GatewayError('MODEM_SIM_ERROR', `AT+CPIN? answered ${finalStatus(response.final)}`, { retryable: true, details: { status: finalStatus(response.final) } });
    }
    if (state === 'READY') return;
    if (state === 'SIM PIN') {
      if (this.options.pin === undefined) throw new GatewayError('MODEM_SIM_PIN_REQUIRED', 'the SIM asks for a PIN and none is configured');
      const unlock = await this.run(`AT+CPIN="${this.options.pin}"`);
      if (unlock.final.kind !== 'ok') {
        // Not retried: a wrong PIN tried again locks the SIM (PUK) after three attempts.
        throw new GatewayError('MODEM_SIM_PIN_REJECTED', `the SIM refused the configured PIN (${finalStatus(unlock.final)})`);
      }
      return;
    }
    throw new GatewayError('MODEM_SIM_LOCKED', `SIM state is '${state}'`, { details: { state } });
  }

  /**
   * Current registration: the best <stat> over the profile's commands; 'unsupported' when the
   * modem refuses every one of them (then registration cannot gate sending).
   */
  async registration(): Promise<number | null | 'unsupported'> {
    let best: number | null = null;
    let answered = false;
    for (const name of this.options.profile.registrationCommands) {
      const response = await this.run(`AT${name}?`, name);
      const value = infoValue(response, name);
      if (response.final.kind !== 'error') answered = true;
      if (response.final.kind !== 'ok' || value === null) continue;
      // TS 27.007 §7.2: the read command answers <n>,<stat>[,...].
      const stat = Number(splitArgs(value)[1]);
      if (Number.isInteger(stat)) {
        if (REGISTERED_STATS.has(stat)) return stat;
        best ??= stat;
      }
    }
    return answered ? best : 'unsupported';
  }

  private async waitForRegistration(): Promise<void> {
    const deadline = this.clock.now() + this.options.registrationTimeoutMs;
    for (;;) {
      const stat = await this.registration();
      if (stat === 'unsupported') {
        this.options.logger.warn('the modem answers ERROR to every registration query; not waiting for registration');
        return;
      }
      if (stat !== null && REGISTERED_STATS.has(stat)) return;
      if (this.clock.now() >= deadline) {
        throw new GatewayError('MODEM_NOT_REGISTERED', `not registered on a network after ${this.options.registrationTimeoutMs} ms (stat ${stat ?? 'none'})`, {
          retryable: true,
          details: { stat },
        });
      }
      await sleep(this.clock, this.options.registrationPollMs ?? 1_000);
    }
  }

  async send(tpduOctets: number, hex: string): Promise<SendResult> {
    let response: AtResponse;
    try {
      response = await this.channel.sendPdu(tpduOctets, hex, { promptTimeoutMs: this.timeouts.promptMs, resultTimeoutMs: this.timeouts.submitMs });
    } catch (err) {
      if (isGatewayError(err, 'AT_PROMPT_TIMEOUT')) return { kind: 'not-sent', status: 'PROMPT_TIMEOUT' };
      if (isGatewayError(err, 'AT_CLOSED')) return { kind: 'not-sent', status: 'DEVICE_LOST' };
      if (isGatewayError(err, 'AT_CLOSED_AFTER_PDU') || isGatewayError(err, 'AT_RESULT_TIMEOUT')) return { kind: 'unknown', status: 'RESULT_UNKNOWN' };
      throw err;
    }
    const final = response.final;
    if (final.kind === 'ok') {
      // TS 27.005 §3.5.1: +CMGS: <mr>[,<ackpdu>] (some modems add the SC time stamp after a comma).
      const mrText = infoValue(response, '+CMGS');
      const mr = mrText === null ? NaN : Number(splitArgs(mrText)[0]);
      if (Number.isInteger(mr) && mr >= 0 && mr <= 255) return { kind: 'accepted', messageReference: mr };
      return { kind: 'unknown', status: 'RESULT_UNKNOWN' };
    }
    if (final.kind === 'cms-error') return { kind: 'rejected', status: finalStatus(final), errorCode: final.code ?? undefined, temporary: isTemporaryCmsError(final.code) };
    if (final.kind === 'cme-error') return { kind: 'rejected', status: finalStatus(final), errorCode: final.code ?? undefined, temporary: isTemporaryCmeError(final.code) };
    return { kind: 'rejected', status: finalStatus(final), errorCode: undefined, temporary: true };
  }

  async health(): Promise<ModemHealth> {
    const csq = await this.run('AT+CSQ', '+CSQ');
    const rssiText = infoValue(csq, '+CSQ');
    const rssiValue = rssiText === null ? NaN : Number(splitArgs(rssiText)[0]);
    const rssi = Number.isInteger(rssiValue) && rssiValue !== 99 ? rssiValue : null;
    const stat = await this.registration();
    const cops = await this.run('AT+COPS?', '+COPS');
    const copsValue = infoValue(cops, '+COPS');
    const operator = copsValue === null ? null : (splitArgs(copsValue)[2] ?? null) || null;
    return {
      rssi,
      signalDbm: rssi === null ? null : -113 + 2 * rssi,
      registration: stat === null || stat === 'unsupported' ? 'unknown' : REGISTRATION_NAMES[stat] ?? `stat-${stat}`,
      operator,
    };
  }

  async identity(): Promise<ModemIdentity> {
    const value = async (command: string): Promise<string | null> => {
      const response = await this.run(command);
      return response.final.kind === 'ok' ? plainValue(response) : null;
    };
    const cpin = await this.run('AT+CPIN?', '+CPIN');
    return {
      manufacturer: await value('AT+CGMI'),
      model: await value('AT+CGMM'),
      revision: await value('AT+CGMR'),
      imei: await value('AT+CGSN'),
      simState: cpin.final.kind === 'ok' ? infoValue(cpin, '+CPIN') : finalStatus(cpin.final),
    };
  }

  /**
   * Reads every stored message (AT+CMGL=4, "ALL") and handles it like a new one: reports and SMS
   * left while down, and, on each +CMTI, whatever else is stored, so a full SIM empties itself
   * (read, store, delete) and never stops reception. `memory` is the storage a +CMTI named
   * (TS 27.005 §3.4.1 <mem>: "SM", "ME", "MT"...): selected with AT+CPMS for the read and delete,
   * then the profile's storage is selected again.
   */
  async drainStored(memory?: string): Promise<void> {
    await this.inStorageOrder(() => this.drainUnlocked(memory));
  }

  /** Runs body after every earlier storage read: an AT+CPMS switch must not change what another read addresses. */
  private inStorageOrder<T>(body: () => Promise<T>): Promise<T> {
    const run = this.storageQueue.then(body);
    this.storageQueue = run.then(() => undefined, () => undefined);
    return run;
  }

  private async drainUnlocked(memory: string | undefined): Promise<void> {
    const home = this.options.profile.messageStorage;
    const switchTo = memory !== undefined && memory !== '' && memory !== home ? memory : undefined;
    if (switchTo !== undefined) await this.selectReadStorage(switchTo);
    try {
      const response = await this.run('AT+CMGL=4', '+CMGL', this.timeouts.commandMs * 4);
      if (response.final.kind !== 'ok') return;
      for (const { header, hex } of response.pdus) {
        const index = Number(splitArgs(header.slice(header.indexOf(':') + 1))[0]);
        if (!Number.isInteger(index)) continue;
        // One message that cannot be handed on (its handler refused) stays on the SIM, unacknowledged,
        // and must not hold back the ones stored after it: a full SIM never stops reception.
        try {
          await this.handleStored(index, hex, switchTo ?? home ?? '');
        } catch (err) {
          this.options.logger.error({ err, index }, 'a stored message could not be handed on; left on the SIM');
        }
      }
    } finally {
      if (switchTo !== undefined && home !== null) await this.selectReadStorage(home);
    }
  }

  /** TS 27.005 §3.2.2 AT+CPMS=<mem1>: the storage AT+CMGL/AT+CMGR/AT+CMGD address. */
  private async selectReadStorage(memory: string): Promise<void> {
    if (!/^[A-Z]{2}$/.test(memory)) throw new GatewayError('MODEM_BAD_URC', `storage name '${memory}' is not two capital letters`);
    await this.tolerate(`AT+CPMS="${memory}"`, '+CPMS');
  }

  /** Routes one URC; never throws (a failure is logged and the report stays unacknowledged). */
  async handleUrc(urc: Urc): Promise<void> {
    try {
      if (urc.name === '+CDS' && urc.pdu !== null) await this.handleDirect(urc.pdu);
      else if (urc.name === '+CMT' && urc.pdu !== null) await this.handleDirect(urc.pdu);
      else if (urc.name === '+CMTI') {
        // TS 27.005 §3.4.1: +CMTI: <mem>,<index>. The storage it names is read, all of it.
        await this.drainStored(splitArgs(urc.args)[0] ?? '');
      } else if (urc.name === '+CDSI') {
        // TS 27.005 §3.4.1: +CMTI: <mem>,<index> / +CDSI: <mem>,<index>.
        const index = Number(splitArgs(urc.args)[1]);
        if (!Number.isInteger(index)) throw new GatewayError('MODEM_BAD_URC', `${urc.name} without an index: ${urc.args}`);
        if (this.indexesInHand.has(`${this.options.profile.messageStorage ?? ''}:${index}`)) return;
        await this.inStorageOrder(async () => {
          const read = await this.run(`AT+CMGR=${index}`, '+CMGR');
          const pdu = read.pdus[0];
          if (read.final.kind !== 'ok' || pdu === undefined) {
            throw new GatewayError('MODEM_READ_FAILED', `AT+CMGR=${index} answered ${finalStatus(read.final)}`, { details: { index } });
          }
          await this.handleStored(index, pdu.hex, this.options.profile.messageStorage ?? '');
        });
      } else {
        this.options.logger.debug({ urc: urc.name, args: urc.args }, 'unsolicited result code');
      }
    } catch (err) {
      this.options.logger.error({ err, urc: urc.name }, 'could not handle an unsolicited report; left unacknowledged');
    }
  }

  private async handleDirect(hex: string): Promise<void> {
    // A handler that rejects leaves the report unacknowledged: with +CSMS service 1 the network resends it.
    await this.handOn(this.decode(hex), hex);
    // TS 27.005 §3.4.4: with +CSMS service 1 every +CMT/+CDS needs +CNMA. An undecodable PDU is
    // acknowledged too once stored with its hex: having it resent would not make it decodable.
    if (this.options.profile.cnmaRequired) {
      const ack = await this.run('AT+CNMA');
      if (ack.final.kind !== 'ok') this.options.logger.warn({ status: finalStatus(ack.final) }, 'AT+CNMA failed');
    }
  }

  private async handleStored(index: number, hex: string, memory: string): Promise<void> {
    const key = `${memory}:${index}`;
    if (this.indexesInHand.has(key)) return;
    this.indexesInHand.add(key);
    try {
      await this.handOn(this.decode(hex), hex);
      // Deleted only after the handler resolved; an undecodable one is deleted too once stored
      // with its hex and reason, or it would fill the SIM and block every later report.
      const deleted = await this.run(`AT+CMGD=${index}`);
      if (deleted.final.kind !== 'ok') this.options.logger.warn({ index, status: finalStatus(deleted.final) }, 'AT+CMGD failed');
    } finally {
      this.indexesInHand.delete(key);
    }
  }

  private decode(hex: string): DecodeResult {
    try {
      return { ok: true, pdu: decodePdu(hex, { smsc: 'present' }) };
    } catch (err) {
      this.options.logger.error({ err, pdu: hex }, 'undecodable PDU from the modem');
      const code = isGatewayError(err) ? err.code : 'PDU_UNDECODABLE';
      return { ok: false, reason: { code, message: err instanceof Error ? err.message : String(err) } };
    }
  }

  /** Never deletes or acknowledges unrecorded: an undecodable PDU goes to its own handler, which stores it. */
  private async handOn(decoded: DecodeResult, hex: string): Promise<void> {
    if (decoded.ok) await this.dispatch(decoded.pdu, hex);
    else await this.options.handlers.onUndecodable(hex, decoded.reason);
  }

  private async dispatch(pdu: DecodedPdu, hex: string): Promise<void> {
    if (pdu.type === 'SMS-STATUS-REPORT') await this.options.handlers.onStatusReport(pdu, hex);
    else if (pdu.type === 'SMS-DELIVER') await this.options.handlers.onInbound(pdu, hex);
    else this.options.logger.warn({ type: pdu.type, pdu: hex }, 'unexpected TPDU type from the modem');
  }
}
