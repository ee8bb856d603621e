//! Command-line configuration of the emulator.

use std::net::SocketAddr;
use std::path::PathBuf;

/// One accepted API key and the organization it belongs to (`None`: a key without organization).
#[derive(Clone)]
pub struct ApiKey {
    /// The bearer value.
    pub key: String,
    /// Organization id, or `None` for a key that has no organization (answers 404 `org not found`).
    pub org: Option<String>,
}

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ApiKey")
            .field("key", &redact_key(&self.key))
            .field("org", &self.org)
            .finish()
    }
}

/// Shows only a key's prefix, so secrets never reach logs.
pub fn redact_key(key: &str) -> String {
    let prefix: String = key.chars().take(8).collect();
    format!("{prefix}…")
}

/// Everything the emulator can be told at start.
#[derive(Clone, Debug)]
pub struct Config {
    /// Address to bind (`--addr`).
    pub addr: SocketAddr,
    /// Accepted keys (`--key`, repeatable).
    pub keys: Vec<ApiKey>,
    /// Per-key scoping of agent runs (`--scope-keys`).
    pub scope_keys: bool,
    /// Requests per minute per organization (`--rate-limit`).
    pub rate_limit: u32,
    /// Accept `http://` loopback webhook URLs (`--allow-http-webhooks`).
    pub allow_http_webhooks: bool,
    /// Multiplier of every service delay (`--time-scale`).
    pub time_scale: f64,
    /// Enables `/__emulator/` (`--control`).
    pub control: bool,
    /// Persistence file (`--state`).
    pub state: Option<PathBuf>,
    /// Extra folder of agent JSON files (`--agents`); the built-in agents are always loaded.
    pub agents_dir: Option<PathBuf>,
    /// Dispatch size budget of one run in bytes (`--dispatch-budget`): the total size of a run's input files;
    /// beyond it a start is 422 `run_too_large`.
    pub dispatch_budget: u64,
    /// Extra PEM certificates (a local test CA) trusted by the outgoing https client (`--ca-file`).
    pub ca_file: Option<PathBuf>,
}

/// Default dispatch budget: 64 MiB of input per run.
pub const DISPATCH_BUDGET: u64 = 64 * 1024 * 1024;

impl Default for Config {
    fn default() -> Self {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 8787)),
            keys: vec![ApiKey {
                key: "sk_test_docauto".into(),
                org: Some("org_demo".into()),
            }],
            scope_keys: false,
            rate_limit: 67,
            allow_http_webhooks: false,
            time_scale: 1.0,
            control: false,
            state: None,
            agents_dir: None,
            dispatch_budget: DISPATCH_BUDGET,
            ca_file: None,
        }
    }
}

/// The `--help` text.
pub const USAGE: &str = "docauto-emulator: local emulator of the Document Automation service

USAGE: docauto-emulator [FLAGS]
  --addr HOST:PORT         bind address (default 127.0.0.1:8787; port 0 picks one)
  --key KEY[:ORG]          accepted API key and its organization, repeatable
                           (default sk_test_docauto:org_demo; KEY: with empty ORG has no organization)
  --scope-keys             a key sees only the agent runs it created
  --rate-limit N           requests per minute per organization (default 67; JWKS exempt)
  --allow-http-webhooks    also accept http:// webhook URLs on loopback
  --time-scale F           multiply every service delay by F (default 1.0)
  --control                enable the test control API under /__emulator/
  --state FILE             persist state to FILE (written before each answer that changed it)
  --agents DIR             also load agent definitions (*.json) from DIR
  --dispatch-budget BYTES  total input size one run may dispatch (default 67108864); beyond: run_too_large
  --ca-file FILE           also trust the PEM certificates in FILE for outgoing https (a local test CA)
  --help                   print this text
";

impl Config {
    /// Parses command-line arguments (without the program name).
    ///
    /// # Errors
    /// A message naming the flag at fault.
    pub fn from_args<I: IntoIterator<Item = String>>(args: I) -> Result<Config, String> {
        let mut cfg = Config::default();
        let mut keys: Vec<ApiKey> = Vec::new();
        let mut it = args.into_iter();
        while let Some(flag) = it.next() {
            let (name, inline) = match flag.split_once('=') {
                Some((n, v)) if n.starts_with("--") => (n.to_string(), Some(v.to_string())),
                _ => (flag.clone(), None),
            };
            let value = |it: &mut I::IntoIter| -> Result<String, String> {
                match inline.clone() {
                    Some(v) => Ok(v),
                    None => it.next().ok_or_else(|| format!("{name}: needs a value")),
                }
            };
            match name.as_str() {
                "--addr" => {
                    let v = value(&mut it)?;
                    cfg.addr = v
                        .parse()
                        .map_err(|_| format!("--addr: `{v}` is not HOST:PORT"))?;
                }
                "--key" => {
                    let v = value(&mut it)?;
                    let (key, org) = match v.split_once(':') {
                        Some((k, o)) => (k.to_string(), (!o.is_empty()).then(|| o.to_string())),
                        None => (v.clone(), Some("org_demo".to_string())),
                    };
                    if key.is_empty() || key.contains(char::is_whitespace) {
                        return Err("--key: the key must be non-empty without spaces".into());
                    }
                    keys.push(ApiKey { key, org });
                }
                "--scope-keys" => cfg.scope_keys = true,
                "--dispatch-budget" => {
                    let v = value(&mut it)?;
                    cfg.dispatch_budget =
                        v.parse().ok().filter(|n: &u64| *n > 0).ok_or_else(|| {
                            format!("--dispatch-budget: `{v}` is not a positive integer")
                        })?;
                }
                "--ca-file" => cfg.ca_file = Some(PathBuf::from(value(&mut it)?)),
                "--rate-limit" => {
                    let v = value(&mut it)?;
                    cfg.rate_limit =
                        v.parse().ok().filter(|n: &u32| *n > 0).ok_or_else(|| {
                            format!("--rate-limit: `{v}` is not a positive integer")
                        })?;
                }
                "--allow-http-webhooks" => cfg.allow_http_webhooks = true,
                "--time-scale" => {
                    let v = value(&mut it)?;
                    cfg.time_scale = v
                        .parse()
                        .ok()
                        .filter(|f: &f64| f.is_finite() && *f >= 0.0)
                        .ok_or_else(|| format!("--time-scale: `{v}` is not a number >= 0"))?;
                }
                "--control" => cfg.control = true,
                "--state" => cfg.state = Some(PathBuf::from(value(&mut it)?)),
                "--agents" => cfg.agents_dir = Some(PathBuf::from(value(&mut it)?)),
                other => return Err(format!("unknown flag `{other}` (see --help)")),
            }
        }
        if !keys.is_empty() {
            cfg.keys = keys;
        }
        Ok(cfg)
    }

    /// Scales a service delay given in milliseconds.
    pub fn scaled_ms(&self, ms: f64) -> u64 {
        let v = ms * self.time_scale;
        if v.is_finite() && v > 0.0 {
            v as u64
        } else {
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn defaults_match_the_issue() {
        let c = Config::from_args(args(&[])).unwrap();
        assert_eq!(c.addr.to_string(), "127.0.0.1:8787");
        assert_eq!(c.rate_limit, 67);
        assert_eq!(c.keys.len(), 1);
        assert_eq!(c.keys[0].key, "sk_test_docauto");
        assert_eq!(c.keys[0].org.as_deref(), Some("org_demo"));
    }

    #[test]
    fn repeated_keys_and_flags_parse() {
        let c = Config::from_args(args(&[
            "--key",
            "a:org_a",
            "--key=b:org_b",
            "--key",
            "c:",
            "--scope-keys",
            "--rate-limit",
            "5",
            "--time-scale",
            "0.01",
            "--control",
            "--allow-http-webhooks",
        ]))
        .unwrap();
        assert_eq!(c.keys.len(), 3);
        assert_eq!(c.keys[2].org, None);
        assert!(c.scope_keys && c.control && c.allow_http_webhooks);
        assert_eq!(c.rate_limit, 5);
    }

    #[test]
    fn bad_flag_is_an_error() {
        assert!(Config::from_args(args(&["--nope"])).is_err());
        assert!(Config::from_args(args(&["--rate-limit", "0"])).is_err());
    }

    #[test]
    fn debug_never_prints_a_key() {
        let c = Config::from_args(args(&["--key", "sk_live_very_secret_value:org"])).unwrap();
        assert!(!format!("{c:?}").contains("very_secret"));
    }
}
