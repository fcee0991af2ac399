import { describe, expect, it } from 'vitest';
import { warmUpFetcher } from '../src/index.js';

describe('warmUpFetcher', () => {
  it('runs a redirect and a gzip page through its own server, never through the caller\'s resolver, policy or pool keys', async () => {
    const touched: string[] = [];
    const warmed = await warmUpFetcher({
      resolve: (host) => {
        touched.push(`resolve ${host}`);
        return Promise.resolve(['203.0.113.9']);
      },
      isAddressAllowed: (address) => {
        touched.push(`policy ${address}`);
        return true;
      },
      connectionKey: (host) => {
        touched.push(`key ${host}`);
        return 'x';
      },
      // A retry would send the warm-up's request twice; it must go once.
      retry: { limit: 5 },
    });
    expect(warmed).toBe(true);
    expect(touched).toEqual([]);
  });

  it('reports a failed request instead of throwing', async () => {
    // The caller's body cap applies: the warm-up page is larger than 10 bytes, so its fetch fails.
    await expect(warmUpFetcher({ maxBodyBytes: 10 })).resolves.toBe(false);
  });
});
