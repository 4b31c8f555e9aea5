/**
 * AtChannel against a scripted modem: each command written gets a scripted reply, delivered whole
 * or one byte at a time, and the results must be the same.
 */
import { describe, expect, it } from 'vitest';
import { isGatewayError } from '../../../src/common/errors.js';
import { AtChannel, CTRL_Z, ESC, type Urc } from '../../../src/transports/modem/at-channel.js';

type Reply = string | null;

class ScriptedModem {
  readonly written: string[] = [];
  readonly urcs: Urc[] = [];
  readonly stray: string[] = [];
  readonly channel: AtChannel;

  constructor(
    private readonly script: (written: string) => Reply,
    private readonly byteByByte: boolean,
  ) {
    this.channel = new AtChannel(
      {
        write: (data) => {
          this.written.push(data);
          const reply = this.script(data);
          if (reply !== null) setTimeout(() => this.feed(reply), 1);
        },
      },
      { onUrc: (urc) => this.urcs.push(urc), onStray: (text) => this.stray.push(text), lateFinalGuardMs: 50 },
    );
  }

  feed(text: string): void {
    if (!this.byteByByte) this.channel.receive(Buffer.from(text, 'latin1'));
    else for (const byte of Buffer.from(text, 'latin1')) this.channel.receive(Uint8Array.of(byte));
  }
}

const PDU = '07911326060032F006D90B911326880736F4111011719551401110117195714000';

for (const byteByByte of [false, true]) {
  describe(`AtChannel (replies ${byteByByte ? 'one byte at a time' : 'whole'})`, () => {
    it('collects information lines and the final result, skipping the echo', async () => {
      const modem = new ScriptedModem((w) => (w === 'AT+CSQ\r' ? 'AT+CSQ\r\r\n+CSQ: 21,99\r\n\r\nOK\r\n' : null), byteByByte);
      const response = await modem.channel.command('AT+CSQ', { timeoutMs: 2_000, expectPrefix: '+CSQ' });
      expect(response).toEqual({ lines: ['+CSQ: 21,99'], pdus: [], final: { kind: 'ok' } });
    });

    it('routes URCs that arrive between a command and its result apart, +CDS with its PDU', async () => {
      const modem = new ScriptedModem(
        (w) => (w === 'AT+COPS?\r' ? `\r\n+COPS: 0,0,"Net",7\r\n\r\n+CDS: 25\r\n${PDU}\r\n\r\n^RSSI: 12\r\n\r\n+CMTI: "SM",4\r\n\r\nOK\r\n` : null),
        byteByByte,
      );
      const response = await modem.channel.command('AT+COPS?', { timeoutMs: 2_000, expectPrefix: '+COPS' });
      expect(response.lines).toEqual(['+COPS: 0,0,"Net",7']);
      expect(modem.urcs).toEqual([
        { name: '+CDS', args: '25', pdu: PDU },
        { name: '^RSSI', args: '12', pdu: null },
        { name: '+CMTI', args: '"SM",4', pdu: null },
      ]);
    });

    it('returns +CMS ERROR as a typed final result', async () => {
      const modem = new ScriptedModem((w) => (w.startsWith('AT+CMGD') ? '\r\n+CMS ERROR: 321\r\n' : null), byteByByte);
      const response = await modem.channel.command('AT+CMGD=9', { timeoutMs: 2_000 });
      expect(response.final).toEqual({ kind: 'cms-error', code: 321, text: '321' });
    });

    it('sends a PDU after the prompt, ended by Ctrl-Z, and reads +CMGS: <mr>', async () => {
      const modem = new ScriptedModem((w) => {
        if (w === 'AT+CMGS=23\r') return '\r\n> ';
        if (w.endsWith(CTRL_Z)) return '\r\n+CMGS: 77\r\n\r\nOK\r\n';
        return null;
      }, byteByByte);
      const response = await modem.channel.sendPdu(23, '0011000B916407281553F80000AA0AE8329BFD4697D9EC37', { promptTimeoutMs: 1_000, resultTimeoutMs: 1_000 });
      expect(response.lines).toEqual(['+CMGS: 77']);
      expect(modem.written).toEqual(['AT+CMGS=23\r', `0011000B916407281553F80000AA0AE8329BFD4697D9EC37${CTRL_Z}`]);
    });

    it('cancels with ESC when no prompt comes, absorbs the OK that follows, and the next command gets its own answer', async () => {
      const modem = new ScriptedModem((w) => {
        if (w === ESC) return '\r\nOK\r\n';
        if (w === 'AT\r') return '\r\nERROR\r\n';
        return null;
      }, byteByByte);
      const failed = await modem.channel.sendPdu(23, '00', { promptTimeoutMs: 50, resultTimeoutMs: 1_000 }).catch((err: unknown) => err);
      expect(isGatewayError(failed, 'AT_PROMPT_TIMEOUT')).toBe(true);
      expect(modem.written).toEqual(['AT+CMGS=23\r', ESC]);
      const next = await modem.channel.command('AT', { timeoutMs: 1_000 });
      expect(next.final).toEqual({ kind: 'error', text: 'ERROR' });
    });

    it('runs one command at a time, in order', async () => {
      const modem = new ScriptedModem((w) => `\r\n${w.trim()}-reply\r\n\r\nOK\r\n`.replace(/^\r\nAT/, '\r\nX'), byteByByte);
      const [a, b] = await Promise.all([modem.channel.command('ATI', { timeoutMs: 1_000 }), modem.channel.command('AT+CGMI', { timeoutMs: 1_000 })]);
      expect(a.lines).toEqual(['XI-reply']);
      expect(b.lines).toEqual(['X+CGMI-reply']);
      expect(modem.written).toEqual(['ATI\r', 'AT+CGMI\r']);
    });
  });
}

describe('AtChannel deadlines and close', () => {
  it('times out a command with AT_TIMEOUT and drops its late final result instead of giving it to the next command', async () => {
    const modem = new ScriptedModem((w) => (w === 'AT+CGSN\r' ? '\r\n123456789012345\r\n\r\nOK\r\n' : null), false);
    const first = await modem.channel.command('AT+CSQ', { timeoutMs: 30 }).catch((err: unknown) => err);
    expect(isGatewayError(first, 'AT_TIMEOUT')).toBe(true);
    modem.feed('\r\nOK\r\n'); // the late answer to AT+CSQ
    const second = await modem.channel.command('AT+CGSN', { timeoutMs: 1_000 });
    expect(second.lines).toEqual(['123456789012345']);
  });

  it('keeps the SIM PIN out of a timed-out AT+CPIN error, message and details alike', async () => {
    const modem = new ScriptedModem(() => null, false);
    const failed = await modem.channel.command('AT+CPIN="4711"', { timeoutMs: 30 }).catch((err: unknown) => err);
    expect(isGatewayError(failed, 'AT_TIMEOUT')).toBe(true);
    expect(modem.written).toEqual(['AT+CPIN="4711"\r']);
    expect(JSON.stringify({ message: (failed as Error).message, details: (failed as { details?: unknown }).details })).not.toContain('4711');
    expect((failed as Error).message).toBe('AT+CPIN=[redacted] got no final result within 30 ms');
    expect((failed as { details?: unknown }).details).toEqual({ command: 'AT+CPIN=[redacted]', timeoutMs: 30 });
  });

  it('close() rejects the command in flight and every queued one with AT_CLOSED', async () => {
    const modem = new ScriptedModem(() => null, false);
    const inFlight = modem.channel.command('AT', { timeoutMs: 5_000 }).catch((err: unknown) => err);
    const queued = modem.channel.command('AT+CSQ', { timeoutMs: 5_000 }).catch((err: unknown) => err);
    while (modem.written.length < 1) await new Promise((r) => setTimeout(r, 5));
    modem.channel.close('unplugged');
    expect(isGatewayError(await inFlight, 'AT_CLOSED')).toBe(true);
    expect(isGatewayError(await queued, 'AT_CLOSED')).toBe(true);
    expect(modem.written).toEqual(['AT\r']);
  });

  it('says AT_CLOSED_AFTER_PDU when the link drops after the PDU was written (result unknown)', async () => {
    const modem = new ScriptedModem((w) => (w === 'AT+CMGS=5\r' ? '\r\n> ' : null), false);
    const sending = modem.channel.sendPdu(5, '0001000000', { promptTimeoutMs: 1_000, resultTimeoutMs: 5_000 }).catch((err: unknown) => err);
    while (modem.written.length < 2) await new Promise((r) => setTimeout(r, 5));
    modem.channel.close('unplugged');
    expect(isGatewayError(await sending, 'AT_CLOSED_AFTER_PDU')).toBe(true);
  });
});
