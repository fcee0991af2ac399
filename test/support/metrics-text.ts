/** Sample values of a Prometheus text page by series name with labels, e.g. `crawlq_groups{state="paused"}`. */
export function samples(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^(\S+)\s+(\S+)$/.exec(line);
    if (match?.[1] && match[2]) values.set(match[1], Number(match[2]));
  }
  return values;
}
