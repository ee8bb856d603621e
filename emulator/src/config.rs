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

impl ApiKey {
    /// `KEY[:ORG]`: `KEY` alone is of `org_demo`, `KEY:` (empty org) is a key without organization.
    ///
    /// # Errors
    /// An empty key, or one with spaces.
    pub fn parse(v: &str) -> Result<ApiKey, String> {
        let (key, org) = match v.split_once(':') {
            Some((k, o)) => (k.to_string(), (!o.is_empty()).then(|| o.to_string())),
            None => (v.to_string(), Some("org_demo".to_string())),
        };
        if key.is_empty() || key.contains(char::is_whitespace) {
            return Err("the key must be non-empty without spaces".into());
        }
        Ok(ApiKey { key, org })
    }
}

fn positive<N: std::str::FromStr + PartialOrd + Default>(v: &str) -> Result<N, String> {
    v.parse()
        .ok()
        .filter(|n: &N| *n > N::default())
        .ok_or_else(|| format!("`{v}` is not a positive integer"))
}

fn time_scale(v: &str) -> Result<f64, String> {
    v.parse()
        .ok()
        .filter(|f: &f64| f.is_finite() && *f >= 0.0)
        .ok_or_else(|| format!("`{v}` is not a number >= 0"))
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
  --state FILE             persist state to FILE, loaded at start; the native binary writes it before each
                           answer that changed it, `npx docauto-emulator` at start and at a clean stop
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
                    keys.push(ApiKey::parse(&value(&mut it)?).map_err(|e| format!("--key: {e}"))?)
                }
                "--scope-keys" => cfg.scope_keys = true,
                "--dispatch-budget" => {
                    let v = value(&mut it)?;
                    cfg.dispatch_budget =
                        positive(&v).map_err(|e| format!("--dispatch-budget: {e}"))?;
                }
                "--ca-file" => cfg.ca_file = Some(PathBuf::from(value(&mut it)?)),
                "--rate-limit" => {
                    let v = value(&mut it)?;
                    cfg.rate_limit = positive(&v).map_err(|e| format!("--rate-limit: {e}"))?;
                }
                "--allow-http-webhooks" => cfg.allow_http_webhooks = true,
                "--time-scale" => {
                    let v = value(&mut it)?;
                    cfg.time_scale = time_scale(&v).map_err(|e| format!("--time-scale: {e}"))?;
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

    /// The options of the wasm build's `createEmulator` (a JSON object), mirroring the flags: `keys` (`"KEY[:ORG]"`
    /// strings or `{key, org}`), `scopeKeys`, `rateLimit`, `allowHttpWebhooks`, `timeScale`, `control`,
    /// `dispatchBudget`. Members the host reads itself (`agents`, `snapshot`) are skipped here; any other member
    /// is an error, so a misspelt option is not silently ignored.
    ///
    /// # Errors
    /// A message naming the option at fault.
    pub fn from_options(o: &serde_json::Value) -> Result<Config, String> {
        use serde_json::Value;
        let mut cfg = Config::default();
        let Some(o) = o.as_object() else {
            return Err("options must be an object".into());
        };
        let flag = |name: &str, v: &Value| {
            v.as_bool()
                .ok_or_else(|| format!("{name}: must be a boolean"))
        };
        // numbers go through the flags' parsers (as text), so both accept and refuse the same values
        let number = |name: &str, v: &Value| match v {
            Value::Number(n) => Ok(n.to_string()),
            _ => Err(format!("{name}: must be a number")),
        };
        for (name, v) in o {
            match name.as_str() {
                "keys" => {
                    let list = v
                        .as_array()
                        .filter(|l| !l.is_empty())
                        .ok_or("keys: must be a non-empty array")?;
                    cfg.keys = list
                        .iter()
                        .enumerate()
                        .map(|(i, k)| {
                            match k {
                                Value::String(s) => ApiKey::parse(s),
                                Value::Object(m) => {
                                    let key =
                                        m.get("key").and_then(Value::as_str).unwrap_or_default();
                                    let org = match m.get("org") {
                                        None => Some("org_demo".to_string()),
                                        Some(Value::Null) => None,
                                        Some(Value::String(o)) => Some(o.clone()),
                                        Some(_) => {
                                            return Err("org must be a string or null".into())
                                        }
                                    };
                                    if key.contains(':') {
                                        return Err("the key must not contain `:`".into());
                                    }
                                    let k = ApiKey::parse(key)?;
                                    Ok(ApiKey { key: k.key, org })
                                }
                                _ => Err("must be \"KEY[:ORG]\" or {key, org}".into()),
                            }
                            .map_err(|e| format!("keys[{i}]: {e}"))
                        })
                        .collect::<Result<_, _>>()?;
                }
                "scopeKeys" => cfg.scope_keys = flag(name, v)?,
                "allowHttpWebhooks" => cfg.allow_http_webhooks = flag(name, v)?,
                "control" => cfg.control = flag(name, v)?,
                "rateLimit" => {
                    cfg.rate_limit =
                        positive(&number(name, v)?).map_err(|e| format!("{name}: {e}"))?
                }
                "dispatchBudget" => {
                    cfg.dispatch_budget =
                        positive(&number(name, v)?).map_err(|e| format!("{name}: {e}"))?
                }
                "timeScale" => {
                    cfg.time_scale =
                        time_scale(&number(name, v)?).map_err(|e| format!("{name}: {e}"))?
                }
                "agents" | "snapshot" => {}
                other => return Err(format!("unknown option `{other}`")),
            }
        }
        Ok(cfg)
    }

    /// The options of [`Config::from_options`] that give this configuration (the wasm build's command line reads
    /// its flags with [`Config::from_args`], then starts from these).
    pub fn to_options(&self) -> serde_json::Value {
        let keys: Vec<serde_json::Value> = self
            .keys
            .iter()
            .map(|k| serde_json::json!({"key": k.key, "org": k.org}))
            .collect();
        serde_json::json!({
            "keys": keys,
            "scopeKeys": self.scope_keys,
            "rateLimit": self.rate_limit,
            "allowHttpWebhooks": self.allow_http_webhooks,
            "timeScale": self.time_scale,
            "control": self.control,
            "dispatchBudget": self.dispatch_budget,
        })
    }

    /// What the emulator prints once it listens at `base_url` (both builds print these same two lines). The dev
    /// keys are printed on purpose: they are local test keys the user chose or the documented default.
    pub fn start_lines(&self, base_url: &str) -> String {
        let keys: Vec<String> = self
            .keys
            .iter()
            .map(|k| format!("{} (org {})", k.key, k.org.as_deref().unwrap_or("<none>")))
            .collect();
        format!(
            "docauto emulator listening on {base_url}\naccepted dev keys: {}",
            keys.join(", ")
        )
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
    fn options_mirror_the_flags() {
        let flags = Config::from_args(args(&[
            "--key",
            "a:org_a",
            "--key",
            "b:",
            "--key",
            "c",
            "--scope-keys",
            "--rate-limit",
            "5",
            "--time-scale",
            "0.5",
            "--control",
            "--allow-http-webhooks",
            "--dispatch-budget",
            "1000",
        ]))
        .unwrap();
        let back = Config::from_options(&flags.to_options()).unwrap();
        assert_eq!(format!("{flags:?}"), format!("{back:?}"));
        let o = Config::from_options(&serde_json::json!({
            "keys": ["a:org_a", {"key": "b", "org": null}, {"key": "c"}],
            "rateLimit": 5, "timeScale": 0.5, "dispatchBudget": 1000,
            "scopeKeys": true, "control": true, "allowHttpWebhooks": true,
            "agents": [], "snapshot": "{}",
        }))
        .unwrap();
        assert_eq!(format!("{flags:?}"), format!("{o:?}"));
    }

    #[test]
    fn bad_options_name_the_option() {
        let bad = |v: serde_json::Value| Config::from_options(&v).unwrap_err();
        assert_eq!(
            bad(serde_json::json!({"rateLimit": 0})),
            "rateLimit: `0` is not a positive integer"
        );
        assert_eq!(
            bad(serde_json::json!({"rateLimit": 1.5})),
            "rateLimit: `1.5` is not a positive integer"
        );
        assert_eq!(
            bad(serde_json::json!({"timeScale": -1})),
            "timeScale: `-1` is not a number >= 0"
        );
        assert_eq!(
            bad(serde_json::json!({"control": "yes"})),
            "control: must be a boolean"
        );
        assert_eq!(
            bad(serde_json::json!({"keys": []})),
            "keys: must be a non-empty array"
        );
        assert_eq!(
            bad(serde_json::json!({"keys": ["a b"]})),
            "keys[0]: the key must be non-empty without spaces"
        );
        assert_eq!(
            bad(serde_json::json!({"rateLimt": 5})),
            "unknown option `rateLimt`"
        );
    }

    #[test]
    fn start_lines_name_keys_and_orgs() {
        let c = Config::from_args(args(&["--key", "a:org_a", "--key", "b:"])).unwrap();
        assert_eq!(
            c.start_lines("http://127.0.0.1:1"),
            "docauto emulator listening on http://127.0.0.1:1\naccepted dev keys: a (org org_a), b (org <none>)"
        );
    }

    #[test]
    fn debug_never_prints_a_key() {
        let c = Config::from_args(args(&["--key", "sk_live_very_secret_value:org"])).unwrap();
        assert!(!format!("{c:?}").contains("very_secret"));
    }
}
