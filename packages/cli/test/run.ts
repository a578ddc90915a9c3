/** Runs the warren command line in-process against a server, capturing its output and exit code. */
import { run } from '../src/main.js';

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export async function warren(args: string[], env: Record<string, string | undefined>): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const code = await run(args, {
    out: (text) => {
      stdout += text;
    },
    err: (text) => {
      stderr += text;
    },
    env,
  });
  return { code, stdout, stderr };
}

/** The environment a user would export: WARREN_URL and WARREN_API_KEY of a test server. */
export function envOf(server: { url: string; apiKey: string }): Record<string, string> {
  return { WARREN_URL: server.url, WARREN_API_KEY: server.apiKey };
}
