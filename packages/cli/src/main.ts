/** The `warren` command line: server commands, client commands and the device agent. */

import { VERSION } from '@warren/server';
import { Command, CommanderError } from 'commander';
import { registerAclCommands } from './commands/acl.js';
import { registerDeviceCommands } from './commands/devices.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerLogCommands } from './commands/logs.js';
import { registerNetworkCommands } from './commands/network.js';
import { registerNodeCommands } from './commands/node.js';
import { Exit, examples, type Io, processIo, UsageError } from './commands/output.js';
import { registerRouteCommands } from './commands/routes.js';
import { registerServerCommands } from './commands/server.js';
import { registerUserCommands } from './commands/users.js';

function buildProgram(io: Io = processIo): Command {
  const program = new Command('warren')
    .description('Warren: control plane and management API for private mesh networks')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text),
      writeErr: (text) => io.err(text),
      outputError: (text, write) => write(text.replace(/^error: /, 'warren: ')),
    })
    .addHelpText(
      'after',
      `\nClient commands call the API at WARREN_URL (default http://127.0.0.1:8080) with WARREN_API_KEY;\nadd --json for scripts.\n${examples(
        [
          'warren serve',
          'export WARREN_API_KEY=wrn_api_…',
          'warren devices list --tag tag:ci --online',
          'warren acl validate policy.hujson',
          'warren keys create --reusable --tag tag:ci --expires 24h',
        ],
      )}`,
    );
  registerServerCommands(program);
  registerDeviceCommands(program, io);
  registerUserCommands(program, io);
  registerNetworkCommands(program, io);
  registerKeyCommands(program, io);
  registerAclCommands(program, io);
  registerRouteCommands(program, io);
  registerLogCommands(program, io);
  registerNodeCommands(program, io);
  return program;
}

/**
 * Runs one command line (without `node warren`) and returns its exit code: 0 on success,
 * 1 when the API refused or could not be reached, 2 for a usage mistake. Errors are one
 * line on stderr: `warren: not_found: device dev_x does not exist`.
 */
export async function run(args: string[], io: Io = processIo): Promise<number> {
  const program = buildProgram(io);
  try {
    await program.parseAsync(args, { from: 'user' });
    return 0;
  } catch (error) {
    // Commander already printed help, the version, or what was wrong with the arguments.
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof Exit) return error.code;
    io.err(`warren: ${error instanceof Error ? error.message : String(error)}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

export async function main(argv: string[]): Promise<void> {
  const code = await run(argv.slice(2));
  if (code !== 0) process.exitCode = code;
}
