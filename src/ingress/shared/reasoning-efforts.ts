/** Reasoning effort levels accepted by every format (spec §2.2, §2.4, §2.6). */
export const REASONING_EFFORTS = ["none", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
