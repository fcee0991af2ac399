/** True for the URLs the PostgreSQL sink takes. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}

/** A database URL with its password replaced, for logs and errors. */
export function redactDatabaseUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '<invalid database url>';
  }
}

/** Removes a password from any text (a driver message could quote the URL). */
export function scrubPassword(text: string, url: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(url).password);
  } catch {
    return text;
  }
  return password.length >= 3 ? text.split(password).join('***') : text;
}
