/**
 * Splits the byte stream from a modem into AT frames.
 *
 * A modem speaks in lines ended by CR LF (ITU-T V.250 §5.7.1: result codes are framed by S3/S4),
 * with two exceptions a plain line reader cannot see:
 * - the AT+CMGS / AT+CMGW prompt "> " has no line end (3GPP TS 27.005 §3.5.1: "the TA shall send
 *   a four character sequence <CR><LF><greater_than><space>");
 * - in PDU mode +CMT:, +CDS:, +CMGR: and +CMGL: headers are followed by a second line holding the
 *   PDU as hex (TS 27.005 §3.4.1, §3.4.3, §4.1, §3.4.2). The framer pairs the two so that nothing
 *   arriving between them can tear a report apart from its PDU.
 *
 * The framer is pure and stateful: push() takes any chunking of the stream (a whole reply or one
 * byte at a time) and returns the frames completed so far.
 */

export type AtFrame =
  | { kind: 'line'; text: string }
  | { kind: 'prompt' }
  | { kind: 'pdu'; header: string; hex: string };

/** Headers whose next line is a PDU in PDU mode (AT+CMGF=0). */
const PDU_HEADER_PREFIXES = ['+CMT:', '+CDS:', '+CMGR:', '+CMGL:'] as const;

/** Longest line the framer holds before giving up on it; a modem never sends more than a PDU line (~360 chars). */
export const MAX_LINE_CHARS = 4096;

const HEX_LINE = /^(?:[0-9A-Fa-f]{2})+$/;
const CR = 0x0d;
const LF = 0x0a;

export class AtFramer {
  private pending = '';
  private pduHeader: string | null = null;
  /** Lines dropped because they exceeded MAX_LINE_CHARS (reported, never silently truncated). */
  overflowCount = 0;

  push(chunk: Uint8Array | string): AtFrame[] {
    const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('latin1');
    const frames: AtFrame[] = [];
    for (let i = 0; i < text.length; i++) {
      const code = text.charCodeAt(i);
      if (code === CR || code === LF) {
        this.endLine(frames);
        continue;
      }
      this.pending += text[i];
      if (this.pending === '> ' && this.pduHeader === null) {
        this.pending = '';
        frames.push({ kind: 'prompt' });
      } else if (this.pending.length > MAX_LINE_CHARS) {
        this.pending = '';
        this.overflowCount++;
      }
    }
    return frames;
  }

  /** The bytes of an unfinished line, for diagnostics. */
  get partialLine(): string {
    return this.pending;
  }

  private endLine(frames: AtFrame[]): void {
    const line = this.pending;
    this.pending = '';
    if (line.trim() === '') return;
    if (this.pduHeader !== null) {
      const header = this.pduHeader;
      this.pduHeader = null;
      if (HEX_LINE.test(line.trim())) {
        frames.push({ kind: 'pdu', header, hex: line.trim().toUpperCase() });
        return;
      }
      // Not a PDU after all (an empty +CMGR slot, or text mode): hand both lines on as they are.
      frames.push({ kind: 'line', text: header });
    }
    if (PDU_HEADER_PREFIXES.some((prefix) => line.startsWith(prefix))) {
      this.pduHeader = line;
      return;
    }
    frames.push({ kind: 'line', text: line });
  }
}
