/** The server tools as the engine's tool loop uses them (engine/ports.ts `ServerTools`). */
export {
  createServerTools,
  type GatewayServerTools,
  type ServerToolsConfig,
  type ServerToolsOptions,
} from "./create-server-tools.js";
