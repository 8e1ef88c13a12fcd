// A real OAuth 2.1 / OIDC authorization server for the tests: panva's oidc-provider (pinned in package-lock.json).
// Usage: node oidc_provider.mjs CONFIG.json — {"port", "jwks": {"keys": [private JWKs]}, "scope"}.
// Resource indicators with JWT (or opaque, introspected) access tokens for any loopback `/mcp` resource, dynamic
// client registration, refresh tokens, and the development login (any user name and password; accounts whose name
// starts with "reader" get only the first scope in their access tokens). Prints "ready <issuer>" once listening.
import { readFileSync } from 'node:fs';
import Provider, { errors } from 'oidc-provider';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const issuer = `http://127.0.0.1:${config.port}`;
const resourceScope = config.scope ?? 'webapp inventory:write';
const loopbackResource = /^http:\/\/(127\.0\.0\.1|localhost):\d+\/mcp$/;
// the account a token is being issued to (at the token endpoint), to grant readers less
const accountOf = (ctx) =>
  ctx.oidc.entities.AuthorizationCode?.accountId ?? ctx.oidc.entities.RefreshToken?.accountId ?? '';

const provider = new Provider(issuer, {
  jwks: config.jwks,
  scopes: ['openid', 'offline_access', ...resourceScope.split(' ')],
  claims: { openid: ['sub'] },
  pkce: { required: () => true },
  clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'] },
  findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
  issueRefreshToken: (_ctx, client, code) =>
    client.grantTypeAllowed('refresh_token') && code.scopes.has('offline_access'),
  ttl: { AccessToken: 300, IdToken: 300, RefreshToken: 3600, Grant: 3600, Session: 3600, Interaction: 600 },
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    revocation: { enabled: true },
    introspection: { enabled: true, allowedPolicy: async (_ctx, client) => client.clientAuthMethod !== 'none' },
    rpInitiatedLogout: { enabled: false },
    resourceIndicators: {
      enabled: true,
      defaultResource: (_ctx, _client, oneOf) => oneOf,
      useGrantedResource: () => true,
      // JWT access tokens, except for clients named "opaque" (for the introspection tests)
      getResourceServerInfo: (ctx, indicator, client) => {
        if (!loopbackResource.test(indicator)) throw new errors.InvalidTarget();
        return {
          scope: accountOf(ctx).startsWith('reader') ? resourceScope.split(' ')[0] : resourceScope,
          audience: indicator,
          accessTokenFormat: client.clientName === 'opaque' ? 'opaque' : 'jwt',
          accessTokenTTL: 300,
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});
provider.proxy = false;
// A registered client may later ask for more of the resource's scopes (MCP step-up), so a registration does not
// pin the client to the scope it asked for first (oidc-provider would refuse every other scope with invalid_scope).
provider.use(async (ctx, next) => {
  if (ctx.method === 'POST' && ctx.path === '/reg') {
    const chunks = [];
    for await (const chunk of ctx.req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
    delete body.scope;
    ctx.request.body = body;
  }
  await next();
});
const server = provider.listen(config.port, '127.0.0.1', () => console.log(`ready ${issuer}`));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
