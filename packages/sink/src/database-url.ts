/** True for the URLs the PostgreSQL sink takes. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}
