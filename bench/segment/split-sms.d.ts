/** Local declaration for split-sms 0.1.7 (it ships no types): the subset the benchmark calls. */
declare module 'split-sms' {
  export interface SplitPart {
    content?: string;
    length: number;
    bytes: number;
  }
  export interface SplitResult {
    characterSet: 'GSM' | 'Unicode';
    parts: SplitPart[];
    bytes: number;
    length: number;
    remainingInPart: number;
  }
  export function split(message: string, options?: { summary?: boolean; characterset?: 'GSM' | 'Unicode' }): SplitResult;
}
