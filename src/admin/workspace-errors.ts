import { GatewayError } from "../errors/gateway-error.js";

/** The error for a workspace id that names none (`param` names the field that carried it). */
export function createUnknownWorkspaceError(id: string, param = "workspace_id"): GatewayError {
  return GatewayError.invalidRequest(`Unknown workspace "${id}"`, param);
}
