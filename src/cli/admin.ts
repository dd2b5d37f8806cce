/** Entry point of the admin CLI (`npm run admin -- …`, `npx gateway-admin …`). */
import { runAdminCli } from "./run-admin-cli.js";

process.exitCode = await runAdminCli(process.argv.slice(2), process.env, {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});
