/**
 * The simulator's message ids carry what it needs to report the receipt again after a crash: an
 * in-process SMSC keeps its pending receipts in memory, so after a `kill -9` the only record of
 * them is the id the engine stored with each 'submitted' part. The id holds the simulator
 * instance, a sequence number (unique within the instance), the submit time and the receipt
 * status, so recoverReceipts() can rebuild each receipt from the id alone:
 *
 *   <instance: 8 hex>-<sequence: base 36>-<submitted at, ms since epoch: base 36>-<status: base64url>
 *
 * Fields are separated by '-', which neither base 36 nor hex uses; base64url may contain '-', so
 * the status is the rest of the id after the third separator.
 */

export interface SimulatorMessageId {
  instance: string;
  sequence: number;
  submittedAtMs: number;
  status: string;
}

const INSTANCE = /^[0-9a-f]{8}$/;
const BASE36 = /^[0-9a-z]{1,13}$/;

export function encodeSimulatorMessageId(id: SimulatorMessageId): string {
  return [id.instance, id.sequence.toString(36), id.submittedAtMs.toString(36), Buffer.from(id.status, 'utf8').toString('base64url')].join('-');
}

/** The id's fields, or undefined for an id this simulator did not make (another format or version). */
export function decodeSimulatorMessageId(messageId: string): SimulatorMessageId | undefined {
  const first = messageId.indexOf('-');
  const second = messageId.indexOf('-', first + 1);
  const third = messageId.indexOf('-', second + 1);
  if (first < 0 || second < 0 || third < 0) return undefined;
  const instance = messageId.slice(0, first);
  const sequence = messageId.slice(first + 1, second);
  const submittedAt = messageId.slice(second + 1, third);
  const encodedStatus = messageId.slice(third + 1);
  if (!INSTANCE.test(instance) || !BASE36.test(sequence) || !BASE36.test(submittedAt) || !/^[A-Za-z0-9_-]+$/.test(encodedStatus)) return undefined;
  const status = Buffer.from(encodedStatus, 'base64url').toString('utf8');
  // A re-encoding that differs means the text was not canonical base64url of a UTF-8 status.
  if (status === '' || Buffer.from(status, 'utf8').toString('base64url') !== encodedStatus) return undefined;
  return { instance, sequence: parseInt(sequence, 36), submittedAtMs: parseInt(submittedAt, 36), status };
}
