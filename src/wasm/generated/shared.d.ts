// Generated from the Rust types by `cargo xtask types` (ts-rs, see src/typegen.rs): do not edit.

/**
 * Status of an agent run.
 * Open: the service may add values.
 */
export type AgentRunStatus = "queued" | "processing" | "waiting" | "paused" | "completed" | "failed" | "cancelled" | "expired" | (string & {});
