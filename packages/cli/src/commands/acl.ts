/** `warren acl get|history|validate|apply`: the policy as a file you edit, check and apply. */
import { type PolicyProblem, WarrenError } from '@warren/client';
import type { Command } from 'commander';
import {
  connect,
  Exit,
  examples,
  type Io,
  positiveInteger,
  printJson,
  printTable,
  readInput,
  UsageError,
  visible,
} from './output.js';

/** One problem per line, as compilers print them: `FILE:12:5: message`. */
function formatProblems(file: string, problems: readonly PolicyProblem[]): string {
  return problems.map((p) => `${file}:${p.line}:${p.column}: ${visible(p.msg)}\n`).join('');
}

/** How a policy's source is named in what is printed: its path, or `<stdin>` for `-`, as compilers do. */
const shownAs = (file: string) => (file === '-' ? '<stdin>' : file);

/** The policy's text exactly as stored (meant for a file), ending in a newline. */
function printPolicyText(io: Io, text: string): void {
  io.out(text.endsWith('\n') ? text : `${text}\n`);
}

export function registerAclCommands(program: Command, io: Io): void {
  const acl = program
    .command('acl')
    .description('read, validate and replace the access policy (HuJSON)')
    .addHelpText(
      'after',
      examples([
        'warren acl get > policy.hujson',
        'warren acl validate policy.hujson',
        'warren acl apply policy.hujson',
      ]),
    );

  acl
    .command('get')
    .description('print the policy as stored (HuJSON with its comments), or as JSON with --json')
    .option('--json', 'print the policy as JSON (comments dropped)')
    .option('--etag', 'also print the ETag, to stderr (for apply --if-match)')
    .addHelpText('after', examples(['warren acl get > policy.hujson', 'warren acl get --json']))
    .action(async (flags: { json?: boolean; etag?: boolean }) => {
      const warren = connect(io);
      let etag: string;
      if (flags.json) {
        const current = await warren.acl.get();
        printJson(io, current.policy);
        etag = current.etag;
      } else {
        const current = await warren.acl.getText();
        printPolicyText(io, current.text);
        etag = current.etag;
      }
      if (flags.etag) io.err(`etag: ${etag}\n`);
    });

  acl
    .command('history [version]')
    .description('every stored version of the policy, newest first; with a VERSION, its text as it was sent')
    .option('--json', 'print the list as the API returns it (a version is printed as its stored text)')
    .option('--etag', "with a VERSION, also print that version's ETag, to stderr")
    .addHelpText('after', examples(['warren acl history', 'warren acl history 3 > policy-v3.hujson']))
    .action(async (versionText: string | undefined, flags: { json?: boolean; etag?: boolean }) => {
      const version = versionText === undefined ? undefined : positiveInteger('the version', versionText);
      // The API keeps an earlier version only as the text that was sent, which is what this prints.
      if (version !== undefined && flags.json)
        throw new UsageError('a version is printed as its stored text: drop --json');
      if (version === undefined && flags.etag) throw new UsageError('--etag goes with a VERSION');
      const warren = connect(io);
      if (version !== undefined) {
        const stored = await warren.acl.version(version);
        printPolicyText(io, stored.text);
        if (flags.etag) io.err(`etag: ${stored.etag}\n`);
        return;
      }
      const versions = await warren.acl.history();
      if (flags.json) return printJson(io, { versions });
      printTable(
        io,
        ['version', 'etag', 'created', 'by'],
        versions.map((v) => [String(v.version), v.etag, v.created, v.createdBy ?? '-']),
        'no stored versions',
      );
    });

  acl
    .command('validate <file>')
    .description(
      'check a policy file (- for stdin) without applying it: one FILE:LINE:COLUMN: problem per line, exit 1 if invalid',
    )
    .option('--json', 'print the API response as JSON ({ "valid", "errors" }); still exit 1 if invalid')
    .addHelpText(
      'after',
      examples(['warren acl validate policy.hujson', 'warren acl get | sed s/22/2222/ | warren acl validate -']),
    )
    .action(async (file: string, flags: { json?: boolean }) => {
      const text = await readInput(file);
      const result = await connect(io).acl.validate(text);
      if (flags.json) printJson(io, result);
      else if (result.valid) io.out(`${shownAs(file)}: valid\n`);
      else io.out(formatProblems(shownAs(file), result.errors));
      if (!result.valid) throw new Exit(1);
    });

  acl
    .command('apply <file>')
    .description(
      'replace the policy with a file (- for stdin); refused if the policy changed since --if-match ETAG (default: the ETag read just before)',
    )
    .option('--if-match <etag>', 'the ETag of the policy this file was edited from (see acl get --etag)')
    .option('--json', 'print the stored policy as the API returns it (as JSON)')
    .addHelpText(
      'after',
      examples(['warren acl apply policy.hujson', 'warren acl apply policy.hujson --if-match \'"3f2a…"\'']),
    )
    .action(async (file: string, flags: { ifMatch?: string; json?: boolean }) => {
      const text = await readInput(file);
      const warren = connect(io);
      const ifMatch = flags.ifMatch ?? (await warren.acl.getText()).etag;
      try {
        const applied = await warren.acl.set(text, { ifMatch: ifMatch || undefined });
        if (flags.json) printJson(io, applied.policy);
        else io.out(`${shownAs(file)}: applied (etag ${applied.etag})\n`);
      } catch (error) {
        if (error instanceof WarrenError && error.errors.length > 0) {
          io.err(formatProblems(shownAs(file), error.errors));
        }
        throw error;
      }
    });
}
