/** A config file the gateway cannot start with; the message names the field (`models[3].pricing.prompt: …`). */
export class ConfigError extends Error {
  override name = "ConfigError";
}
