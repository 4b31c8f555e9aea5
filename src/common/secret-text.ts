/**
 * Masking secrets in text, whatever characters they hold. A database URL's password may contain
 * `/`, `@`, `#`, `?`, `%` or a space: a URL parser then fails on the raw value (or reads a wrong host),
 * so masking never depends on parsing. Two ways, one mask:
 * - redactUrlPassword: by the URL's structure, the text between `user:` and the last `@`;
 * - maskSecretsIn: by value, every form the secret can take in a message (as written, percent-decoded,
 *   percent-encoded, JSON-escaped), for text that only echoes it (pg's errors, log lines).
 * The process remembers the secrets its config names (rememberSecret), so a path that does not know the
 * config (the CLI's last-resort failure line, every log line) still masks them: maskKnownSecrets.
 */

export const SECRET_MASK = '***';

/** `scheme://` then the rest; the userinfo ends at the last `@` (a password may hold `@` and `/`). */
const URL_WITH_SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)(.*)$/s;

/** Where a URL's password sits in `url` (start and end offsets), or undefined when it has none. */
function passwordSpan(url: string): { start: number; end: number } | undefined {
  const match = URL_WITH_SCHEME.exec(url);
  if (match === null) return undefined;
  const prefixLength = (match[1] as string).length;
  const rest = match[2] as string;
  const at = rest.lastIndexOf('@');
  if (at < 0) return undefined;
  const colon = rest.indexOf(':');
  if (colon < 0 || colon > at) return undefined;
  return { start: prefixLength + colon + 1, end: prefixLength + at };
}

/** The password of a URL exactly as written in it (possibly percent-encoded), or undefined when it has none. */
export function urlPassword(url: string): string | undefined {
  const span = passwordSpan(url);
  if (span === undefined || span.end === span.start) return undefined;
  return url.slice(span.start, span.end);
}

/** The URL with its password replaced by `***` (`postgresql://gw:***@host/db`); user, host, port and database stay readable. */
export function redactUrlPassword(url: string): string {
  const span = passwordSpan(url);
  if (span === undefined || span.end === span.start) return url;
  return `${url.slice(0, span.start)}${SECRET_MASK}${url.slice(span.end)}`;
}

function decodedOrSelf(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Every form a secret can take in a message, longest first so a longer form is masked whole. */
function secretForms(secret: string): string[] {
  const plain = new Set([secret, decodedOrSelf(secret), encodeURIComponent(decodedOrSelf(secret)), encodeURIComponent(secret)]);
  const forms = new Set<string>();
  for (const form of plain) {
    if (form === '') continue;
    forms.add(form);
    // As a JSON string would carry it (a log line, `--json` output): quotes and backslashes escaped.
    forms.add(JSON.stringify(form).slice(1, -1));
  }
  return [...forms].sort((a, b) => b.length - a.length);
}

/** `text` with every occurrence of each secret, in each of its forms, replaced by `***`. */
export function maskSecretsIn(text: string, secrets: Iterable<string>): string {
  let masked = text;
  for (const secret of secrets) {
    for (const form of secretForms(secret)) {
      if (masked.includes(form)) masked = masked.split(form).join(SECRET_MASK);
    }
  }
  return masked;
}

const knownSecrets = new Set<string>();

/** Remembers a secret the config names, so maskKnownSecrets masks it from then on in this process. */
export function rememberSecret(secret: string): void {
  if (secret !== '') knownSecrets.add(secret);
}

/** `text` with every secret remembered so far masked: for messages and log lines that do not know the config. */
export function maskKnownSecrets(text: string): string {
  return knownSecrets.size === 0 ? text : maskSecretsIn(text, knownSecrets);
}
