import { isIP } from 'node:net';

/**
 * True for names that only ever reach this machine: `localhost`, 127.0.0.0/8
 * and ::1 (also IPv4-mapped, and in brackets as URLs and Host headers write
 * them). Other names are not resolved: a name that resolves to loopback today
 * may not tomorrow, so only literals count.
 */
export function isLoopbackHost(host: string): boolean {
  const name = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1').replace(/\.$/, '');
  // Not `*.localhost`: resolvers other than the browser's may send those to DNS.
  if (name === 'localhost') return true;
  switch (isIP(name)) {
    case 4:
      return name.startsWith('127.');
    case 6: {
      const mapped = /^(?:0{0,4}:){0,5}:?ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(name)?.[1];
      if (mapped !== undefined) return mapped.startsWith('127.');
      return /^(?:0{0,4}:){1,7}0{0,3}1$|^::1$/.test(name);
    }
    default:
      return false;
  }
}
