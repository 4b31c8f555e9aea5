/**
 * Runs a CLI command module's `run(args)` in this process with stdout and stderr captured, the way
 * the `smsgate` dispatcher would call it, and puts both streams back afterwards whatever happens.
 */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function captureCliOutput(body: () => Promise<number>): Promise<CliResult> {
  const result = { stdout: '', stderr: '' };
  const writeStdout = process.stdout.write;
  const writeStderr = process.stderr.write;
  const collector = (stream: 'stdout' | 'stderr') =>
    ((chunk: string | Uint8Array) => {
      result[stream] += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
      return true;
    }) as typeof process.stdout.write;
  process.stdout.write = collector('stdout');
  process.stderr.write = collector('stderr');
  try {
    const code = await body();
    return { code, ...result };
  } finally {
    process.stdout.write = writeStdout;
    process.stderr.write = writeStderr;
  }
}
