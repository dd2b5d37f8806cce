/**
 * The admin CLI: `<group> <action> [arguments]` plus the global `--json` and `--help`. Arguments are
 * validated before any connection is made; the work itself is the admin service's.
 */
import { type ParseArgsConfig, parseArgs } from "node:util";
import type { AdminService } from "../admin/admin-service.js";
import {
  DEFAULT_WORKSPACE_LIST_LIMIT,
  encodeKey,
  encodeKeyLimits,
  encodeWorkspace,
  GENERATION_LIST_LIMIT,
} from "../admin/admin-wire.js";
import { parseExpiry } from "../admin/parse-expiry.js";
import { convertMicroUsdToUsd } from "../admin/parse-usd.js";
import { USAGE_DAYS } from "../admin/read-workspace-usage.js";
import { createCommonErrorEnvelope } from "../errors/envelopes.js";
import { GatewayError } from "../errors/gateway-error.js";
import type { AdminAlerts } from "./admin-alerts.js";
import type { AdminReports } from "./admin-reports.js";
import { type AdminTransport, openAdminTransport } from "./admin-transport.js";
import {
  formatCreatedKey,
  formatKey,
  formatKeyTable,
  formatTotalReset,
  formatWorkspace,
  formatWorkspaceTable,
} from "./format-admin-output.js";
import {
  formatKeySpend,
  formatRequestTable,
  formatSpendWindows,
  formatWorkspaceUsage,
} from "./format-admin-reports.js";
import { formatKeyThresholds, formatWebhook } from "./format-alert-settings.js";

export interface CliIo {
  stdout(text: string): void;
  stderr(text: string): void;
}

type OptionValues = Record<string, string | boolean | undefined>;
type ParsedOptions = NonNullable<ParseArgsConfig["options"]>;

interface CommandOutput {
  /** The `--json` document. */
  json: unknown;
  text: string;
}

interface CommandSpec {
  usage: string;
  options: ParsedOptions;
  positionals: string[];
  /** Turns raw arguments into the call to make; throws invalid_request before anything connects. */
  prepare(
    values: OptionValues,
    positionals: string[],
  ): (admin: AdminService, reports: AdminReports, alerts: AdminAlerts) => Promise<CommandOutput>;
}

const GLOBAL_OPTIONS: ParsedOptions = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
};
const GLOBAL_FLAGS = new Set(["--json", "--help", "-h"]);

const COMMANDS: Record<string, CommandSpec> = {
  "workspace create": {
    usage:
      "workspace create --name <name> [--credits <USD>] [--invoicing] [--allow-duplicate-name]\n" +
      "             (a name already taken is refused unless --allow-duplicate-name)",
    options: {
      name: { type: "string" },
      credits: { type: "string" },
      invoicing: { type: "boolean" },
      "allow-duplicate-name": { type: "boolean" },
    },
    positionals: [],
    prepare: (values) => async (admin) => {
      if (values.name === undefined) throw GatewayError.invalidRequest("--name is required", "name");
      const workspace = await admin.createWorkspace({
        name: values.name as string,
        creditsUsd: values.credits as string | undefined,
        invoicing: values.invoicing === true,
        allowDuplicateName: values["allow-duplicate-name"] === true,
      });
      return {
        json: { workspace: encodeWorkspace(workspace) },
        text: formatWorkspace(`Created workspace ${workspace.id}`, workspace),
      };
    },
  },
  "workspace list": {
    usage: `workspace list [--name <name>] [--limit <N>]   (oldest first; default limit ${DEFAULT_WORKSPACE_LIST_LIMIT})`,
    options: { name: { type: "string" }, limit: { type: "string" } },
    positionals: [],
    prepare: (values) => {
      const limit =
        values.limit === undefined ? DEFAULT_WORKSPACE_LIST_LIMIT : readCount(values.limit, "limit");
      return async (admin) => {
        const workspaces = await admin.listWorkspaces({ name: values.name as string | undefined, limit });
        return {
          json: { data: workspaces.map(encodeWorkspace) },
          text: formatWorkspaceTable(workspaces, limit),
        };
      };
    },
  },
  "workspace show": {
    usage: "workspace show <workspace-id>",
    options: {},
    positionals: ["workspace-id"],
    prepare:
      (_, [id]) =>
      async (admin) => {
        const workspace = await admin.getWorkspace(id);
        return {
          json: { workspace: encodeWorkspace(workspace) },
          text: formatWorkspace(`Workspace ${workspace.id}`, workspace),
        };
      },
  },
  "workspace credit": {
    usage: "workspace credit <workspace-id> <USD>   (a negative amount removes credit)",
    options: {},
    positionals: ["workspace-id", "USD"],
    prepare:
      (_, [id, usd]) =>
      async (admin) => {
        const workspace = await admin.creditWorkspace(id, usd);
        return {
          json: { workspace: encodeWorkspace(workspace) },
          text: formatWorkspace(`Credited workspace ${workspace.id} with ${usd} USD`, workspace),
        };
      },
  },
  "workspace update": {
    usage:
      "workspace update <workspace-id> [--invoicing on|off] [--locked on|off] [--cache-ttl <seconds>|off]\n" +
      "             (cache-ttl: the response-cache policy of the workspace's keys without their own)",
    options: { invoicing: { type: "string" }, locked: { type: "string" }, "cache-ttl": { type: "string" } },
    positionals: ["workspace-id"],
    prepare: (values, [id]) => {
      const invoicing = readOnOff(values.invoicing, "invoicing");
      const locked = readOnOff(values.locked, "locked");
      const responseCacheTtlSeconds = readCacheTtl(values["cache-ttl"]);
      if (invoicing === undefined && locked === undefined && responseCacheTtlSeconds === undefined) {
        throw GatewayError.invalidRequest("Nothing to update: give --invoicing, --locked and/or --cache-ttl");
      }
      return async (admin) => {
        const workspace = await admin.updateWorkspace(id, { invoicing, locked, responseCacheTtlSeconds });
        return {
          json: { workspace: encodeWorkspace(workspace) },
          text: formatWorkspace(`Updated workspace ${workspace.id}`, workspace),
        };
      };
    },
  },
  "workspace usage": {
    usage: `workspace usage <workspace-id> [--days <N>]   (requests, tokens and cost per UTC day and model; default ${USAGE_DAYS.default} days)`,
    options: { days: { type: "string" } },
    positionals: ["workspace-id"],
    prepare: (values, [id]) => {
      const days = values.days === undefined ? undefined : readCount(values.days, "days");
      if (days !== undefined && (days < 1 || days > USAGE_DAYS.max)) {
        throw GatewayError.invalidRequest(`--days must be from 1 to ${USAGE_DAYS.max}`, "days");
      }
      return async (_admin, reports) => {
        const usage = await reports.workspaceUsage(id, days);
        return { json: usage, text: formatWorkspaceUsage(usage) };
      };
    },
  },
  "workspace alert-webhook": {
    usage:
      "workspace alert-webhook <workspace-id> [--url <https-URL>|none] [--thresholds 50,80,100|none]\n" +
      "             (budget alerts; without --url shows the webhook; setting it prints a new signing secret, once)",
    options: { url: { type: "string" }, thresholds: { type: "string" } },
    positionals: ["workspace-id"],
    prepare: (values, [id]) => {
      const url = values.url === undefined ? undefined : String(values.url).trim();
      const thresholds = readThresholdList(values.thresholds, "thresholds");
      if (url === undefined && thresholds !== undefined) {
        throw GatewayError.invalidRequest("--thresholds needs --url (the webhook is set whole)", "url");
      }
      if (url === "") throw GatewayError.invalidRequest("--url must be a URL or none", "url");
      const removing = url === "none" || url === "off";
      if (removing && thresholds !== undefined) {
        throw GatewayError.invalidRequest("--thresholds cannot go with --url none", "thresholds");
      }
      return async (_admin, _reports, alerts) => {
        const webhook =
          url === undefined
            ? await alerts.getWebhook(id)
            : await alerts.setWebhook(id, { url: removing ? null : url, thresholds });
        return {
          json: webhook,
          text: formatWebhook(webhook, url === undefined ? "show" : removing ? "remove" : "set"),
        };
      };
    },
  },
  requests: {
    usage:
      `requests --workspace <workspace-id> [--key <key-id>] [--session <id>] [--limit <N>]\n` +
      `             (newest first; default ${GENERATION_LIST_LIMIT.default}, at most ${GENERATION_LIST_LIMIT.max}; needs a running gateway)`,
    options: {
      workspace: { type: "string" },
      key: { type: "string" },
      session: { type: "string" },
      limit: { type: "string" },
    },
    positionals: [],
    prepare: (values) => {
      if (values.workspace === undefined)
        throw GatewayError.invalidRequest("--workspace is required", "workspace");
      const limit = values.limit === undefined ? undefined : readCount(values.limit, "limit");
      if (limit !== undefined && (limit < 1 || limit > GENERATION_LIST_LIMIT.max)) {
        throw GatewayError.invalidRequest(`--limit must be from 1 to ${GENERATION_LIST_LIMIT.max}`, "limit");
      }
      return async (_admin, reports) => {
        const list = await reports.listRequests(values.workspace as string, {
          keyId: values.key as string | undefined,
          sessionId: values.session as string | undefined,
          limit,
        });
        return { json: list, text: formatRequestTable(list.data) };
      };
    },
  },
  "key create": {
    usage:
      "key create --workspace <workspace-id> [--name <name>] [--models a/b,c/d] [--expires <ISO-8601>] [--member <id>]\n" +
      "             [--daily <USD>] [--monthly <USD>] [--total <USD>] [--rpm <N>] [--cache-ttl <seconds>|off]",
    options: {
      "cache-ttl": { type: "string" },
      workspace: { type: "string" },
      name: { type: "string" },
      models: { type: "string" },
      expires: { type: "string" },
      member: { type: "string" },
      daily: { type: "string" },
      monthly: { type: "string" },
      total: { type: "string" },
      rpm: { type: "string" },
    },
    positionals: [],
    prepare: (values) => {
      if (values.workspace === undefined)
        throw GatewayError.invalidRequest("--workspace is required", "workspace");
      const models = values.models === undefined ? undefined : readModelList(values.models as string);
      const expiresAt =
        values.expires === undefined ? undefined : parseExpiry(values.expires as string, "--expires");
      const requestsPerMinute = values.rpm === undefined ? undefined : readRpm(values.rpm as string);
      const responseCacheTtlSeconds = readCacheTtl(values["cache-ttl"]);
      return async (admin) => {
        const { key, secret, limits } = await admin.createKey({
          workspaceId: values.workspace as string,
          name: values.name as string | undefined,
          models,
          expiresAt,
          memberId: values.member as string | undefined,
          dailyLimitUsd: values.daily as string | undefined,
          monthlyLimitUsd: values.monthly as string | undefined,
          totalLimitUsd: values.total as string | undefined,
          requestsPerMinute: requestsPerMinute ?? undefined,
          responseCacheTtlSeconds,
        });
        return {
          json: { key: encodeKey(key), secret, ...(limits ? { limits: encodeKeyLimits(limits) } : {}) },
          text: formatCreatedKey(key, secret, limits),
        };
      };
    },
  },
  "key show": {
    usage: "key show <key-id>   (the key, its limits and its spend per window)",
    options: {},
    positionals: ["key-id"],
    prepare:
      (_, [id]) =>
      async (admin, reports) => {
        const { key, limits } = await admin.getKey(id);
        const report = await reports.keySpend(key.id);
        return {
          json: { key: encodeKey(key), limits: encodeKeyLimits(limits), spend: report.spend },
          text: formatKey(`API key ${key.id}`, key, limits) + formatSpendWindows(report),
        };
      },
  },
  "key spend": {
    usage:
      "key spend <key-id>   (spend, reservations and headroom per window; rate limit; workspace balance)",
    options: {},
    positionals: ["key-id"],
    prepare:
      (_, [id]) =>
      async (_admin, reports) => {
        const report = await reports.keySpend(id);
        return { json: report, text: formatKeySpend(report) };
      },
  },
  "key update": {
    usage:
      "key update <key-id> [--daily <USD>|none] [--monthly <USD>|none] [--total <USD>|none] [--rpm <N>|none]\n" +
      "             [--models a/b,c/d|all] [--alert-thresholds 50,80,100|none] [--cache-ttl <seconds>|off]\n" +
      "             [--expires <ISO-8601>|never] [--actor <name>]   (rpm none: the config default applies;\n" +
      "             alert thresholds none: the workspace's apply; cache-ttl off: the workspace's policy applies)",
    options: {
      "alert-thresholds": { type: "string" },
      "cache-ttl": { type: "string" },
      daily: { type: "string" },
      monthly: { type: "string" },
      total: { type: "string" },
      rpm: { type: "string" },
      models: { type: "string" },
      expires: { type: "string" },
      actor: { type: "string" },
    },
    positionals: ["key-id"],
    prepare: (values, [id]) => {
      const limit = (value: string | boolean | undefined) =>
        value === undefined ? undefined : value === "none" ? null : (value as string);
      const changes = {
        dailyLimitUsd: limit(values.daily),
        monthlyLimitUsd: limit(values.monthly),
        totalLimitUsd: limit(values.total),
        requestsPerMinute:
          values.rpm === undefined ? undefined : values.rpm === "none" ? null : readRpm(values.rpm as string),
        models:
          values.models === undefined
            ? undefined
            : values.models === "all"
              ? null
              : readModelList(values.models as string),
        responseCacheTtlSeconds: readCacheTtl(values["cache-ttl"]),
        expiresAt:
          values.expires === undefined
            ? undefined
            : values.expires === "never"
              ? null
              : parseExpiry(values.expires as string, "--expires"),
        actor: values.actor as string | undefined,
      };
      const thresholds = readThresholdList(values["alert-thresholds"], "alert-thresholds");
      const limitsChange = Object.entries(changes).some(
        ([name, value]) => name !== "actor" && value !== undefined,
      );
      if (!limitsChange && thresholds === undefined) {
        throw GatewayError.invalidRequest(
          "Nothing to update: give --daily, --monthly, --total, --rpm, --models, --expires, --alert-thresholds and/or --cache-ttl",
        );
      }
      return async (admin, _reports, alerts) => {
        // Thresholds first: they are validated whole, so a refused list leaves the limits unchanged.
        const alertThresholds =
          thresholds === undefined ? undefined : await alerts.setKeyThresholds(id, thresholds);
        const { key, limits } = limitsChange ? await admin.updateKey(id, changes) : await admin.getKey(id);
        return {
          json: {
            key: encodeKey(key),
            limits: encodeKeyLimits(limits),
            ...(alertThresholds === undefined ? {} : { alert_thresholds: alertThresholds.thresholds }),
          },
          text:
            formatKey(`Updated API key ${key.id}`, key, limits) +
            (alertThresholds === undefined ? "" : formatKeyThresholds(alertThresholds.thresholds)),
        };
      };
    },
  },
  "key reset-total": {
    usage: "key reset-total <key-id> --actor <name>   (starts a new total-spend window; audit-logged)",
    options: { actor: { type: "string" } },
    positionals: ["key-id"],
    prepare: (values, [id]) => {
      if (values.actor === undefined) throw GatewayError.invalidRequest("--actor is required", "actor");
      return async (admin) => {
        const reset = await admin.resetKeyTotal(id, values.actor as string);
        return {
          json: {
            key: encodeKey(reset.key),
            limits: encodeKeyLimits(reset.limits),
            previous_total_spend_usd: convertMicroUsdToUsd(reset.previousSpendMicroUsd),
            previous_total_spend_micro_usd: String(reset.previousSpendMicroUsd),
            reset_at: reset.resetAt.toISOString(),
          },
          text: formatTotalReset(reset),
        };
      };
    },
  },
  "key list": {
    usage: "key list --workspace <workspace-id>",
    options: { workspace: { type: "string" } },
    positionals: [],
    prepare: (values) => {
      if (values.workspace === undefined)
        throw GatewayError.invalidRequest("--workspace is required", "workspace");
      const workspaceId = values.workspace as string;
      return async (admin) => {
        const keys = await admin.listKeys(workspaceId);
        return { json: { data: keys.map(encodeKey) }, text: formatKeyTable(workspaceId, keys) };
      };
    },
  },
  ...createStatusCommands(),
};

function createStatusCommands(): Record<string, CommandSpec> {
  const actions = [
    ["disable", "disabled", "Disabled"],
    ["enable", "active", "Enabled"],
    ["revoke", "revoked", "Revoked (final)"],
  ] as const;
  return Object.fromEntries(
    actions.map(([action, status, verb]) => [
      `key ${action}`,
      {
        usage: `key ${action} <key-id>`,
        options: {},
        positionals: ["key-id"],
        prepare:
          (_: OptionValues, [id]: string[]) =>
          async (admin: AdminService) => {
            const key = await admin.setKeyStatus(id, status);
            return { json: { key: encodeKey(key) }, text: formatKey(`${verb} API key ${key.id}`, key) };
          },
      } satisfies CommandSpec,
    ]),
  );
}

export const ADMIN_CLI_USAGE = `Usage: gateway-admin [--json] <command>

Commands:
${Object.values(COMMANDS)
  .map((command) => `  ${command.usage}`)
  .join("\n")}

Options:
  --json   machine output: one JSON document on stdout (errors too, as an error envelope)
  --help   show this help

A running gateway is used through its admin API: the one at GATEWAY_URL; else, without
DATABASE_URL, the gateway holding GATEWAY_DATA_DIR (default ./.data), found at the address it
wrote there; else the one at http://127.0.0.1:$PORT (default 8080). With none answering, the CLI
opens the database itself: DATABASE_URL, else the embedded database in GATEWAY_DATA_DIR, which
it refuses to open while another process holds it. REDIS_URL, when set, carries key changes to
other gateway instances. The admin API is authenticated by INTERNAL_SHARED_SECRET or the data
folder's admin-token. Every command names on stderr the gateway or database it used. Expiry
dates without a time zone are read as UTC.
`;

export async function runAdminCli(
  argv: string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  openTransport: typeof openAdminTransport = openAdminTransport,
): Promise<number> {
  const beforeSeparator = argv.includes("--") ? argv.slice(0, argv.indexOf("--")) : argv;
  const json = beforeSeparator.includes("--json");
  const help = beforeSeparator.includes("--help") || beforeSeparator.includes("-h");
  let transport: AdminTransport | undefined;
  try {
    const { name, rest } = splitCommand(argv);
    const command = name === undefined ? undefined : COMMANDS[name];
    if (help) {
      io.stdout(command ? `Usage: gateway-admin [--json] ${command.usage}\n` : ADMIN_CLI_USAGE);
      return 0;
    }
    if (!command) {
      throw GatewayError.invalidRequest(
        name === undefined ? "Missing command (see --help)" : `Unknown command "${name}" (see --help)`,
      );
    }
    const { values, positionals } = parseCommandArguments(command, rest);
    const run = command.prepare(values, positionals);
    transport = await openTransport({ env, warn: (message) => io.stderr(`${message}\n`) });
    // On stderr, so --json output stays one document; said before the work, so a failure names it too.
    io.stderr(`gateway-admin: using ${transport.target}\n`);
    const output = await run(transport.admin, transport.reports, transport.alerts);
    io.stdout(json ? `${JSON.stringify(output.json, null, 2)}\n` : output.text);
    return 0;
  } catch (error) {
    // A local operator may see internal messages: they are the only clue when a database is down.
    const gatewayError =
      error instanceof GatewayError ? error : new GatewayError("internal_error", (error as Error).message);
    if (json) io.stdout(`${JSON.stringify(createCommonErrorEnvelope(gatewayError), null, 2)}\n`);
    else io.stderr(`error: ${gatewayError.message}\n`);
    return 1;
  } finally {
    await transport?.close();
  }
}

/**
 * The command is the first two words that are not global flags (`key create`, `workspace credit`),
 * or the first alone when that is a command (`requests`).
 */
function splitCommand(argv: string[]): { name: string | undefined; rest: string[] } {
  const words: number[] = [];
  for (let index = 0; index < argv.length && words.length < 2; index++) {
    const token = argv[index];
    if (GLOBAL_FLAGS.has(token)) continue;
    if (token.startsWith("-")) break;
    words.push(index);
    if (words.length === 1 && Object.hasOwn(COMMANDS, token)) break;
  }
  if (words.length === 1 && Object.hasOwn(COMMANDS, argv[words[0]])) {
    return { name: argv[words[0]], rest: argv.filter((_, index) => index !== words[0]) };
  }
  if (words.length < 2) return { name: words.length === 1 ? argv[words[0]] : undefined, rest: [] };
  return {
    name: `${argv[words[0]]} ${argv[words[1]]}`,
    rest: argv.filter((_, index) => !words.includes(index)),
  };
}

function parseCommandArguments(
  command: CommandSpec,
  args: string[],
): { values: OptionValues; positionals: string[] } {
  // parseArgs would read "-5" as an unknown short option; negative amounts are positionals here.
  const negativeNumbers = args.filter((arg) => /^-\d/.test(arg));
  const others = args.filter((arg) => !/^-\d/.test(arg));
  const prepared =
    negativeNumbers.length > 0 && !others.includes("--") ? [...others, "--", ...negativeNumbers] : args;
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: prepared,
      options: Object.assign({}, GLOBAL_OPTIONS, command.options),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw GatewayError.invalidRequest(`${(error as Error).message}\nUsage: gateway-admin ${command.usage}`);
  }
  if (parsed.positionals.length !== command.positionals.length) {
    const expected = command.positionals.map((name) => `<${name}>`).join(" ") || "no positional arguments";
    throw GatewayError.invalidRequest(`Expected ${expected}\nUsage: gateway-admin ${command.usage}`);
  }
  return { values: parsed.values as OptionValues, positionals: parsed.positionals };
}

/**
 * `50,80,100` → [50, 80, 100]; `none` (or `off`) → null; absent → undefined. Only the form is
 * checked here; the range and the count are the admin API's (admin/alert-settings.ts).
 */
function readThresholdList(value: string | boolean | undefined, option: string): number[] | null | undefined {
  if (value === undefined) return undefined;
  const text = String(value).trim();
  if (text === "none" || text === "off") return null;
  const items = text.split(",").map((item) => item.trim().replace(/%$/, ""));
  if (items.some((item) => !/^\d+$/.test(item))) {
    throw GatewayError.invalidRequest(
      `--${option} must be whole percentages separated by commas (e.g. 50,80,100), or none; got "${text}"`,
      option,
    );
  }
  return items.map(Number);
}

function readModelList(text: string): string[] {
  return text
    .split(",")
    .map((slug) => slug.trim())
    .filter((slug) => slug !== "");
}

/** `--cache-ttl`: whole seconds, or `off` (no policy of its own); the admin service checks the range. */
function readCacheTtl(value: string | boolean | undefined): number | null | undefined {
  if (value === undefined) return undefined;
  if (String(value).trim() === "off") return null;
  return readCount(value, "cache-ttl", ' of seconds or "off"');
}

function readRpm(text: string): number {
  return readCount(text, "rpm", " of requests per minute");
}

function readCount(value: string | boolean | undefined, option: string, unit = ""): number {
  const text = String(value).trim();
  if (!/^\d+$/.test(text)) {
    throw GatewayError.invalidRequest(`--${option} must be a whole number${unit}, got "${value}"`, option);
  }
  return Number(text);
}

function readOnOff(value: string | boolean | undefined, option: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === "on" || value === "true") return true;
  if (value === "off" || value === "false") return false;
  throw GatewayError.invalidRequest(`--${option} must be on or off, got "${String(value)}"`, option);
}
