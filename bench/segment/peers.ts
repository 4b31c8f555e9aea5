/**
 * The two npm peers, called the way their READMEs show: split-sms `split(text)` (and its
 * `summary` mode, which counts without building part texts) and sms-segments-calculator
 * `new SegmentedMessage(text).segmentsCount` (Twilio's calculator, which always builds segments).
 */
import * as splitSms from 'split-sms';
import segmentsCalculator from 'sms-segments-calculator';

export interface PeerCount {
  encoding: 'GSM-7' | 'UCS-2';
  parts: number;
}

export function splitSmsCount(text: string): PeerCount {
  const result = splitSms.split(text, { summary: true });
  return { encoding: result.characterSet === 'GSM' ? 'GSM-7' : 'UCS-2', parts: result.parts.length };
}

export function splitSmsSplit(text: string): string[] {
  return splitSms.split(text).parts.map((part) => part.content ?? '');
}

export function twilioCount(text: string): PeerCount {
  const message = new segmentsCalculator.SegmentedMessage(text);
  return { encoding: message.encodingName, parts: message.segmentsCount };
}
