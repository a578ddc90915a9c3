/**
 * `warren sso get|set`: the network's OpenID provider. The client secret is read from a file or
 * from WARREN_SSO_CLIENT_SECRET, never from a flag (flags end up in shell history and `ps`).
 */
import type { SsoConfigBody } from '@warren/contract';
import type { Command } from 'commander';
import { collect, connect, examples, type Io, printFields, printJson, readText, UsageError } from './output.js';

function printSso(io: Io, sso: SsoConfigBody): void {
  printFields(io, [
    ['issuer', sso.issuer],
    ['client id', sso.clientId],
    ['allowed domains', sso.allowedDomains.join(', ') || '(none)'],
    ['enforce', sso.enforce ? 'yes: only single sign-on opens a console session' : 'no'],
    ['redirect URI', sso.redirectUri],
    ['updated', sso.updated],
  ]);
}

export function registerSsoCommands(program: Command, io: Io): void {
  const sso = program.command('sso').description("the network's single sign-on (OpenID Connect)");

  sso
    .command('get')
    .description('show the single sign-on settings (never the client secret)')
    .option('--json', 'print the API response as JSON')
    .action(async (flags: { json?: boolean }) => {
      const settings = await connect(io).network.sso();
      if (flags.json) printJson(io, settings);
      else printSso(io, settings);
    });

  sso
    .command('set')
    .description('set the OpenID provider people sign in with (key with scope "all")')
    .requiredOption('--issuer <url>', 'the provider, e.g. https://id.example.com/realms/acme')
    .requiredOption('--client-id <id>', 'the client registered with the provider')
    .option('--client-secret-file <path>', 'file holding the client secret (else WARREN_SSO_CLIENT_SECRET)')
    .option('--domain <domain>', 'people of this email domain become members at first sign-in (repeat)', collect)
    .option('--enforce', 'only single sign-on opens a console session (no one-time links)')
    .option('--json', 'print the API response as JSON')
    .addHelpText(
      'after',
      examples([
        'WARREN_SSO_CLIENT_SECRET=… warren sso set --issuer https://id.example.com/realms/acme --client-id warren --domain example.com',
      ]),
    )
    .action(
      async (flags: {
        issuer: string;
        clientId: string;
        clientSecretFile?: string;
        domain?: string[];
        enforce?: boolean;
        json?: boolean;
      }) => {
        const secret = (
          flags.clientSecretFile ? await readText(flags.clientSecretFile) : (io.env.WARREN_SSO_CLIENT_SECRET ?? '')
        ).trim();
        if (!secret) throw new UsageError('give the client secret in --client-secret-file or WARREN_SSO_CLIENT_SECRET');
        const settings = await connect(io).network.setSso({
          issuer: flags.issuer,
          clientId: flags.clientId,
          clientSecret: secret,
          allowedDomains: flags.domain ?? [],
          enforce: flags.enforce === true,
        });
        if (flags.json) printJson(io, settings);
        else printSso(io, settings);
      },
    );
}
