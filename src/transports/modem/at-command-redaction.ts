/**
 * An AT command as it may appear in logs and error messages: `AT+CPIN="1234"` (3GPP TS 27.007
 * §8.3) carries the SIM PIN, so its argument is replaced; every other command is shown as written.
 */
export function redactAtCommand(command: string): string {
  return command.toUpperCase().startsWith('AT+CPIN=') ? 'AT+CPIN=[redacted]' : command;
}
