import http from 'node:http';
import https from 'node:https';
import type { ConnectionKey } from './fetcher-options.js';

/**
 * Keep-alive agents whose pools are also keyed by `key(host)` (see
 * `FetcherOptions.connectionKey`): when a host's agreed address changes, its
 * next request opens a new socket (resolved again) instead of reusing one to
 * the old address, so the socket goes where the server gate counted it.
 */
export function keyedAgents(options: http.AgentOptions, key: ConnectionKey | undefined): { http: http.Agent; https: https.Agent } {
  if (key === undefined) return { http: new http.Agent(options), https: new https.Agent(options) };
  const suffix = (name: string, host: string | null | undefined): string => {
    const extra = host ? key(host) : undefined;
    return extra === undefined ? name : `${name}@${extra}`;
  };
  class KeyedHttpAgent extends http.Agent {
    override getName(request?: http.ClientRequestArgs): string {
      return suffix(super.getName(request), request?.host ?? request?.hostname);
    }
  }
  class KeyedHttpsAgent extends https.Agent {
    override getName(request?: https.RequestOptions): string {
      return suffix(super.getName(request), request?.host ?? request?.hostname);
    }
  }
  return { http: new KeyedHttpAgent(options), https: new KeyedHttpsAgent(options) };
}
