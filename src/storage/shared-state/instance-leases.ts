/** The engine's InstanceLeases over SharedState: one sorted set, member = instance id, score = last renewal. */
import type { InstanceLeases } from "../../engine/ports.js";
import type { SharedState } from "../store.js";

export const INSTANCE_LEASES_INDEX = "instances";

export function createInstanceLeases(state: SharedState): InstanceLeases {
  return {
    renew: (instanceId) => state.touchMember(INSTANCE_LEASES_INDEX, instanceId),
    async list() {
      const members = await state.listMembers(INSTANCE_LEASES_INDEX);
      return members.map(({ member, score }) => ({ instanceId: member, renewedAt: score }));
    },
    forget: (instanceId) => state.removeMember(INSTANCE_LEASES_INDEX, instanceId),
  };
}
