/**
 * Cuts the byte stream of an SMPP connection into PDU frames by their command_length, before any
 * decoding. It is the only place that decides whether the stream can still be read:
 *
 * - a command_length below the 16-octet header or above MAX_COMMAND_LENGTH_BYTES cannot be a PDU,
 *   and nothing after it can be found again (the next header's position is unknown), so the reader
 *   reports it once and stops: the link must be dropped (unrecoverable, as cloudhopper-smpp's
 *   UnrecoverablePduException);
 * - a frame of a sane length is handed on whole, even if its body turns out undecodable: that is
 *   recoverable (generic_nack, link kept) and decided by the caller (pdu-decoder.ts).
 *
 * The `smpp` package's own reader has neither check below 16: a command_length of 2 makes it ask
 * the socket for -2 octets and wait until the enquire_link timeout drops the link (~34 s).
 */

/** SMPP 3.4 §3.2: the header is command_length, command_id, command_status, sequence_number, 4 octets each. */
export const SMPP_HEADER_BYTES = 16;

/**
 * The longest frame accepted: 66 560 octets (64 KiB + 1 KiB). SMPP 3.4 §3.1/§2.2 set no upper
 * bound on command_length; the largest legal deliver_sm (§4.6.1) is its 16-octet header, at most
 * 316 octets of mandatory fields (a 254-octet short_message included), every optional TLV it
 * allows at its longest (222 octets with their 4-octet headers) and a message_payload TLV of
 * 65 535 octets of value (§5.3.2.32) with its header: 66 089 octets. A longer length is a corrupt
 * or hostile stream, not a message, and buffering it would only waste memory.
 */
export const MAX_COMMAND_LENGTH_BYTES = 64 * 1024 + 1024;

export interface BadFrameLength {
  commandLength: number;
}

export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);
  private broken = false;

  /**
   * Feeds bytes as they arrived; calls onFrame for every complete frame (command_length octets,
   * header included) in order. Returns the impossible length that ended the stream, if one did;
   * after that every further chunk is ignored.
   */
  push(chunk: Buffer, onFrame: (frame: Buffer) => void): BadFrameLength | null {
    if (this.broken) return null;
    const data = this.buffered.length === 0 ? chunk : Buffer.concat([this.buffered, chunk]);
    let offset = 0;
    while (data.length - offset >= 4) {
      const commandLength = data.readUInt32BE(offset);
      if (commandLength < SMPP_HEADER_BYTES || commandLength > MAX_COMMAND_LENGTH_BYTES) {
        this.broken = true;
        this.buffered = Buffer.alloc(0);
        return { commandLength };
      }
      if (data.length - offset < commandLength) break;
      onFrame(data.subarray(offset, offset + commandLength));
      offset += commandLength;
    }
    // Copied, so a small remainder does not pin the whole socket chunk.
    this.buffered = offset === data.length ? Buffer.alloc(0) : Buffer.from(data.subarray(offset));
    return null;
  }
}
