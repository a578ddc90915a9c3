/** The `warren` command line: server commands, client commands and the device agent. */

import { Command, CommanderError } from 'commander';
import { registerAclCommands } from './commands/acl.js';
import { registerConsoleCommands } from './commands/console.js';
import { registerDeviceCommands } from './commands/devices.js';
import { registerEventCommands } from './commands/events.js';
import { registerKeyCommands } from './commands/keys.js';
import { registerLogCommands } from './commands/logs.js';
import { registerNetworkCommands } from './commands/network.js';
import { registerNodeCommands } from './commands/node.js';
import { Exit, examples, type Io, processIo, UsageError, visible } from './commands/output.js';
import { registerRouteCommands } from './commands/routes.js';
import { registerServerCommands } from './commands/server.js';
import { registerSsoCommands } from './commands/sso.js';
import { registerUserCommands } from './commands/users.js';
import { registerWebhookCommands } from './commands/webhooks.js';
import { registerWhoamiCommand } from './commands/whoami.js';
import { VERSION } from './package.js';

/**
 * The program. Commander's own complaints (unknown command or option, missing argument) are
 * handed to `onUsage` instead of being printed with the whole help text, so that `run` can
 * print them as one line.
 */
function buildProgram(io: Io, onUsage: (text: string) => void): Command {
  const program = new Command('warren')
    .description('Warren: control plane and management API for private mesh networks')
    .version(VERSION)
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.out(text),
      writeErr: (text) => io.err(text),
      outputError: (text) => onUsage(text),
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
  registerConsoleCommands(program, io);
  registerSsoCommands(program, io);
  registerDeviceCommands(program, io);
  registerUserCommands(program, io);
  registerNetworkCommands(program, io);
  registerWhoamiCommand(program, io);
  registerKeyCommands(program, io);
  registerAclCommands(program, io);
  registerRouteCommands(program, io);
  registerLogCommands(program, io);
  registerEventCommands(program, io);
  registerWebhookCommands(program, io);
  registerNodeCommands(program, io);
  return program;
}

/** `warren keys create`: the deepest command that `args` name, for the help hint. */
function commandPath(program: Command, args: readonly string[]): string {
  const path = [program.name()];
  let command = program;
  for (const arg of args) {
    const sub = command.commands.find((c) => c.name() === arg || c.aliases().includes(arg));
    if (!sub) break;
    path.push(arg);
    command = sub;
  }
  return path.join(' ');
}

/**
 * Runs one command line (without `node warren`) and returns its exit code: 0 on success,
 * 1 when the API refused or could not be reached, 2 for a usage mistake. Errors are one
 * line on stderr: `warren: not_found: device dev_x does not exist`, with control characters
 * from the server shown escaped.
 */
export async function run(args: string[], io: Io = processIo): Promise<number> {
  let usage: string | undefined;
  const program = buildProgram(io, (text) => {
    usage = text;
  });
  try {
    await program.parseAsync(args, { from: 'user' });
    return 0;
  } catch (error) {
    if (error instanceof CommanderError) {
      // --help and --version end with 0; a group without its subcommand printed its help.
      if (error.exitCode === 0) return 0;
      if (usage !== undefined) {
        const what = usage
          .replace(/^error: /, '')
          .trim()
          .replace(/\s*\n\s*/g, ' ');
        io.err(`warren: ${visible(what)} (see: ${commandPath(program, args)} --help)\n`);
      }
      return 2;
    }
    if (error instanceof Exit) return error.code;
    io.err(`warren: ${visible(error instanceof Error ? error.message : String(error))}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}

/**
 * A reader that stops early (`warren logs audit --follow | head`) closes the pipe, and the next
 * write fails with EPIPE. The reader has what it wanted, so the command ends at once with 0, as
 * `yes | head` ends without a complaint, instead of dying with a stack trace (or, with
 * `set -o pipefail`, failing the script that asked for only the first lines).
 */
function endQuietlyWhenPipeCloses(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
}

export async function main(argv: string[]): Promise<void> {
  endQuietlyWhenPipeCloses(process.stdout);
  endQuietlyWhenPipeCloses(process.stderr);
  const code = await run(argv.slice(2));
  if (code !== 0) process.exitCode = code;
}
