//! Webhook verification.
