/** True for the URLs the PostgreSQL sink takes (`postgres://` or `postgresql://`, any case). */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}
